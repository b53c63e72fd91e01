/**
 * One entry of a Kerberos keytab: whose key it holds. The key itself is never read out of the
 * file's bytes: only the principal, the key version and the encryption type.
 */
export interface KeytabEntry {
  /** `primary[/instance...]@REALM`, e.g. `mirror@EXAMPLE.COM` or `kafka/broker1.example.com@EXAMPLE.COM`. */
  readonly principal: string
  readonly keyVersion: number
  readonly encryptionType: number
}

/** Why bytes are not a keytab MIT Kerberos, Heimdal and Java read (format 0x0502, or the old 0x0501). */
export class KeytabFormatError extends Error {}

/**
 * The entries of a keytab file in the MIT format (`kadmin ktadd`, `ktutil`, `ipa-getkeytab`,
 * Active Directory's `ktpass` all write it): a version 0x05 0x02 (big-endian) or 0x05 0x01 (host
 * byte order, here little-endian), then records of a signed 32-bit length; a negative length is a
 * hole left by a removed entry. A record: component count, realm, components, name type (0x0502
 * only), timestamp, 8-bit key version, key type, key, and a 32-bit key version when room is left.
 */
export function keytabEntries (bytes: Buffer): KeytabEntry[] {
  if (bytes.length < 2 || bytes[0] !== 0x05 || (bytes[1] !== 0x01 && bytes[1] !== 0x02)) {
    throw new KeytabFormatError('does not start with a keytab version (0x0502)')
  }
  const bigEndian = bytes[1] === 0x02
  const u16 = (at: number): number => bigEndian ? bytes.readUInt16BE(at) : bytes.readUInt16LE(at)
  const i32 = (at: number): number => bigEndian ? bytes.readInt32BE(at) : bytes.readInt32LE(at)
  const u32 = (at: number): number => bigEndian ? bytes.readUInt32BE(at) : bytes.readUInt32LE(at)
  const entries: KeytabEntry[] = []
  let at = 2
  while (at + 4 <= bytes.length) {
    const size = i32(at)
    at += 4
    if (size === 0) break
    if (size < 0) { at += -size; continue }
    const end = at + size
    if (end > bytes.length) throw new KeytabFormatError('ends inside an entry')
    let p = at
    const need = (n: number): void => { if (p + n > end) throw new KeytabFormatError('has an entry shorter than its fields') }
    const counted = (): string => {
      need(2)
      const length = u16(p)
      need(2 + length)
      const text = bytes.toString('utf8', p + 2, p + 2 + length)
      p += 2 + length
      return text
    }
    need(2)
    // In 0x0501 the count includes the realm.
    const components = u16(p) - (bigEndian ? 0 : 1)
    p += 2
    const realm = counted()
    const names: string[] = []
    for (let i = 0; i < components; i++) names.push(counted())
    if (bigEndian) { need(4); p += 4 }
    need(4 + 1 + 2)
    p += 4
    let keyVersion = bytes[p] as number
    p += 1
    const encryptionType = u16(p)
    p += 2
    need(2)
    p += 2 + u16(p)
    need(0)
    if (end - p >= 4) {
      const wide = u32(p)
      if (wide !== 0) keyVersion = wide
    }
    entries.push({ principal: `${names.join('/')}@${realm}`, keyVersion, encryptionType })
    at = end
  }
  return entries
}
