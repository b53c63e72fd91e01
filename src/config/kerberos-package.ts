import { createRequire } from 'node:module'

/** The npm package that binds the system's GSS-API library (MIT Kerberos on Linux): an optional dependency. */
export const KERBEROS_PACKAGE = 'kerberos'

/** Loads an npm package by name, as `require` does; throws when it cannot be loaded. */
export type PackageLoader = (packageName: string) => unknown

const requireHere: PackageLoader = createRequire(import.meta.url)

/**
 * The one-line problem for `sasl.mechanism=GSSAPI` when the `kerberos` package cannot be used:
 * what is wrong with it and how to install it. It is optional, so `npm install` carries on without
 * it when its build fails (no prebuilt binary fits, and no C++ compiler or Kerberos headers).
 */
export function kerberosInstallHint (why: string): string {
  return `sasl.mechanism=GSSAPI needs the optional npm package ${KERBEROS_PACKAGE}, which ${why}; install it where the sidecar is installed: npm install ${KERBEROS_PACKAGE} (it downloads a prebuilt binary from GitHub, or builds with a C++ compiler, python3 and the Kerberos headers: apt-get install build-essential libkrb5-dev; see docs/security.md)`
}

/** Why `error` (thrown by loading the package) makes it unusable, in a few words. */
export function kerberosLoadFailure (error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') return 'is not installed'
  return `does not load (${String((error as Error).message).split('\n')[0]})`
}

/**
 * Undefined when the `kerberos` package loads and has the client the GSSAPI mechanism uses;
 * otherwise why it is unusable (`is not installed`, `does not load (...)`). Checked with the
 * configuration, before anything connects: a missing binding is a mistake of the installation,
 * not a failure to retry.
 */
export function kerberosPackageUnusable (loader: PackageLoader = requireHere): string | undefined {
  let library: unknown
  try {
    library = loader(KERBEROS_PACKAGE)
  } catch (error) {
    return kerberosLoadFailure(error)
  }
  return typeof (library as { initializeClient?: unknown }).initializeClient === 'function' ? undefined : 'does not load (it has no initializeClient)'
}
