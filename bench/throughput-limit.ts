/** What a sidecar run with `--throughput.limit.bytes` achieved against its limit. */
export interface ThroughputLimitFigures {
  /** The limit the sidecar was given, in bytes per second of fetched source data. */
  readonly limitBytesPerSecond: number
  /**
   * Fetched bytes per second (`kafka_mirror_consumed_bytes_total`, what the limit counts) between
   * the polls that saw 10 % and 90 % of the records on the target: the steady rate, without the
   * one-second burst at the start.
   */
  readonly fetchedBytesPerSecond: number
  /** `kafka_mirror_throttled_seconds_total` when every record was on the target. */
  readonly throttledSeconds: number
}

/**
 * The limit among sidecar arguments (`--sidecar-arg=--throughput.limit.bytes=N` or the flag and
 * its value as two arguments); undefined without one or with 0 (no limit). The sidecar itself
 * validates the value: anything else it refuses at start.
 */
export function sidecarThroughputLimit (args: readonly string[]): number | undefined {
  let raw: string | undefined
  args.forEach((arg, i) => {
    if (arg === '--throughput.limit.bytes') raw = args[i + 1]
    else if (arg.startsWith('--throughput.limit.bytes=')) raw = arg.slice('--throughput.limit.bytes='.length)
  })
  const value = raw === undefined ? Number.NaN : Number(raw.trim())
  return Number.isFinite(value) && value > 0 ? value : undefined
}

/** Bytes per second between two readings of a byte counter; NaN when either is missing or no time passed. */
export function byteRate (from: { atMs: number, bytes: number } | undefined, to: { atMs: number, bytes: number } | undefined): number {
  if (from === undefined || to === undefined || !(to.atMs > from.atMs) || !Number.isFinite(from.bytes) || !Number.isFinite(to.bytes)) return Number.NaN
  return (to.bytes - from.bytes) / ((to.atMs - from.atMs) / 1000)
}
