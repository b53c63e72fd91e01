import { type Implementation, loadNative, type NativeLoader, requireNative } from './native-loader.js'

/*
 * CRC-32C (Castagnoli), the checksum of a record batch v2 (bytes 21 to the end, KIP-98). Native
 * code from @node-rs/crc32 (SSE 4.2 / ARMv8 CRC instructions) where it loads, else JavaScript.
 */

/** CRC-32C of `bytes`, continuing from `initial` (the CRC of the bytes before them; default 0). */
export type Crc32c = (bytes: Uint8Array, initial?: number) => number

const POLYNOMIAL = 0x82F63B78

let tables: Int32Array[] | undefined
function sliceTables (): Int32Array[] {
  if (tables !== undefined) return tables
  const first = new Int32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLYNOMIAL : c >>> 1
    first[n] = c
  }
  tables = [first]
  for (let k = 1; k < 8; k++) {
    const previous = tables[k - 1] as Int32Array
    const table = new Int32Array(256)
    for (let n = 0; n < 256; n++) table[n] = (previous[n]! >>> 8) ^ first[previous[n]! & 0xff]!
    tables.push(table)
  }
  return tables
}

/** CRC-32C in JavaScript, slicing by 8 (eight bytes per step), as kafkajs' own (patched) code does. */
export const crc32cJs: Crc32c = (bytes, initial = 0) => {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = sliceTables() as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array]
  let crc = ~initial
  const length = bytes.length
  const whole = length - (length & 7)
  let i = 0
  for (; i < whole; i += 8) {
    const low = crc ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24))
    crc = t7[low & 0xff]! ^ t6[(low >>> 8) & 0xff]! ^ t5[(low >>> 16) & 0xff]! ^ t4[low >>> 24]! ^
      t3[bytes[i + 4]!]! ^ t2[bytes[i + 5]!]! ^ t1[bytes[i + 6]!]! ^ t0[bytes[i + 7]!]!
  }
  for (; i < length; i++) crc = (crc >>> 8) ^ t0[(crc ^ bytes[i]!) & 0xff]!
  return ~crc >>> 0
}

/** The CRC-32C function `loader` gives: @node-rs/crc32's native one, else `crc32cJs`. */
export function loadCrc32c (loader: NativeLoader = requireNative): { readonly crc32c: Crc32c, readonly implementation: Implementation } {
  const native = loadNative<{ crc32c: (input: Uint8Array, initialState?: number) => number }>('@node-rs/crc32', loader)
  if (native === undefined || typeof native.crc32c !== 'function') return { crc32c: crc32cJs, implementation: 'javascript' }
  const nativeCrc32c = native.crc32c
  return { crc32c: (bytes, initial = 0) => nativeCrc32c(bytes, initial), implementation: 'native' }
}

const loaded = loadCrc32c()

/** Which CRC-32C `crc32c` runs here. */
export const crc32cImplementation: Implementation = loaded.implementation

/** CRC-32C of `bytes` (an unsigned 32-bit number), continuing from `initial` (default 0). */
export const crc32c: Crc32c = loaded.crc32c
