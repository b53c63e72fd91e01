/*
 * CRC-32C arithmetic over lengths instead of bytes (zlib's crc32_combine, for the Castagnoli
 * polynomial). A CRC is linear over GF(2): for messages of equal length, crc(X) xor crc(Y) depends
 * only on X xor Y, and appending n zero bytes multiplies the register by x^(8n) modulo the
 * polynomial. So a batch whose first bytes change (the header fields a mirror's producer sets)
 * gets its new CRC from the old one in O(log n) steps, where computing it again reads every byte.
 */

/** CRC-32C's polynomial, bit-reflected (as `crc32c.ts` uses it). */
const POLYNOMIAL = 0x82F63B78
/** x^0 in the reflected representation. */
const ONE = 0x80000000

/** a(x) * b(x) modulo the polynomial (reflected, unsigned 32-bit). */
function multiplyModP (a: number, b: number): number {
  let m = ONE
  let product = 0
  for (;;) {
    if ((a & m) !== 0) {
      product ^= b
      if ((a & (m - 1)) === 0) break
    }
    m >>>= 1
    b = (b & 1) !== 0 ? (b >>> 1) ^ POLYNOMIAL : b >>> 1
  }
  return product >>> 0
}

/** x^(2^k) modulo the polynomial, k = 0..31. */
const X_POW_2K = (() => {
  const table = new Uint32Array(32)
  let p = ONE >>> 1 // x^1
  table[0] = p
  for (let k = 1; k < 32; k++) table[k] = p = multiplyModP(p, p)
  return table
})()

/** x^(8 * bytes) modulo the polynomial: the operator that appends `bytes` zero bytes. */
function zeroBytesOperator (bytes: number): number {
  let p = ONE
  let k = 3 // 8 = 2^3: one byte is eight bits
  for (let n = bytes; n > 0; n = Math.floor(n / 2), k++) {
    if (n % 2 === 1) p = multiplyModP(X_POW_2K[k & 31] as number, p)
  }
  return p
}

/** CRC-32C of A followed by B, from crc(A), crc(B) and the length of B. */
export function crc32cCombine (crcA: number, crcB: number, lengthB: number): number {
  return (multiplyModP(zeroBytesOperator(lengthB), crcA) ^ crcB) >>> 0
}

/**
 * CRC-32C of A' followed by B, from `crc` (that of A followed by B) and the CRCs of A and A' (of
 * equal length): the CRC of a message whose first bytes were replaced, without reading B.
 */
export function crc32cPrefixReplaced (crc: number, crcOfPrefix: number, crcOfNewPrefix: number, restBytes: number): number {
  // The two messages differ only in their prefixes: the CRC of the difference followed by zero bytes.
  return (crc ^ crc32cCombine((crcOfPrefix ^ crcOfNewPrefix) >>> 0, 0, restBytes)) >>> 0
}
