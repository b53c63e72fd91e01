/** Bytes in the GB of "CPU seconds per GB copied": 10^9 bytes of keys and values. */
export const GB_BYTES = 1e9

/**
 * CPU seconds spent per GB (10^9 bytes of keys + values) copied: `cpuSeconds` over
 * `records * recordBytes`. NaN when either is unknown or nothing was copied.
 */
export function cpuSecondsPerGb (cpuSeconds: number, records: number, recordBytes: number): number {
  const bytes = records * recordBytes
  if (!Number.isFinite(cpuSeconds) || !(bytes > 0)) return Number.NaN
  return cpuSeconds / (bytes / GB_BYTES)
}
