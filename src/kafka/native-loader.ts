import { createRequire } from 'node:module'

/**
 * Loads an npm package by name, as `require` does; throws when it cannot be loaded. The native
 * codecs and CRC-32C take one so a test can stand in for a platform without the prebuilt binary.
 */
export type NativeLoader = (packageName: string) => unknown

/** `require` from this project's node_modules. */
export const requireNative: NativeLoader = createRequire(import.meta.url)

/** Which implementation a codec or checksum runs: the package's native code, or the JavaScript fallback. */
export type Implementation = 'native' | 'javascript'

/**
 * `packageName` loaded with `loader`, or undefined when that fails: napi-rs packages throw at
 * load on a platform for which no prebuilt binary was published (or installed), and the caller
 * keeps its JavaScript code then.
 */
export function loadNative<T> (packageName: string, loader: NativeLoader): T | undefined {
  try {
    return loader(packageName) as T
  } catch {
    return undefined
  }
}
