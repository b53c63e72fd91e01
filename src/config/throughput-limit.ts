import type { ProblemList } from './values.js'

/** The smallest throughput limit accepted, in bytes per second: below it one fetched batch would wait minutes. */
const MIN_THROUGHPUT_LIMIT_BYTES = 1024

/**
 * `--throughput.limit.bytes` / mm2.properties `throughput.limit.bytes` (`A->B.throughput.limit.bytes`
 * per flow): bytes per second of fetched source data, an integer of at least
 * `MIN_THROUGHPUT_LIMIT_BYTES`, or 0 for no limit (the default). Returns undefined for no limit,
 * and records a problem naming `key` and the value when it is not one of those.
 */
export function parseThroughputLimit (key: string, raw: string | undefined, problems: ProblemList): number | undefined {
  if (raw === undefined) return undefined
  const trimmed = raw.trim()
  const value = /^\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN
  if (value === 0) return undefined
  if (!Number.isSafeInteger(value) || value < MIN_THROUGHPUT_LIMIT_BYTES) {
    problems.add(key, raw, `expected bytes per second as an integer of at least ${MIN_THROUGHPUT_LIMIT_BYTES} (e.g. 10485760 for 10 MiB/s), or 0 for no limit`)
    return undefined
  }
  return value
}
