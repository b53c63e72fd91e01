/**
 * Canonical JSON, the bytes a completeness certificate signs: object keys sorted (by UTF-16 code
 * units, as `Array.prototype.sort` orders strings) at every depth, no whitespace, strings escaped
 * as `JSON.stringify` escapes them, numbers only as safe integers (offsets and counts larger than
 * 2^53 are written as decimal strings by the caller). Invariant: two values that are equal as JSON
 * data serialise to the same bytes, so a signature over them is reproducible.
 */
export function canonicalJson (value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value)
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError(`canonical JSON holds safe integers only, not ${value}`)
    return String(value)
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  throw new TypeError(`canonical JSON cannot hold a ${typeof value}`)
}
