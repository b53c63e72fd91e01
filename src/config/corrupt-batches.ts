import type { ProblemList } from './values.js'
import { parseChoice } from './values.js'

/**
 * What the mirror does with a source record batch whose CRC-32C does not match its bytes (corrupt
 * on the source cluster's disk or on its way): `fail` (the default) stops the flow before the batch
 * and anything after it in its partition is copied or committed; `skip` leaves the batch out,
 * counts it (`kafka_mirror_corrupt_batches_total`), logs a warning naming its offsets and commits
 * past it. A corrupt batch is never written to the target either way.
 */
const CorruptBatchesModes = ['fail', 'skip'] as const
export type CorruptBatchesMode = typeof CorruptBatchesModes[number]

export const DEFAULT_CORRUPT_BATCHES: CorruptBatchesMode = 'fail'

/** `--corrupt.batches` / mm2.properties `corrupt.batches`: fail or skip. */
export function parseCorruptBatches (key: string, raw: string | undefined, problems: ProblemList): CorruptBatchesMode | undefined {
  return parseChoice(key, raw, CorruptBatchesModes, problems)
}
