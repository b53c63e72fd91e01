import type { OffsetSyncIndex } from '../../mirror-topics/offset-sync-index.js'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import { FIRST_COMMON_RECORD_METHOD, type Aligner, type AlignmentPoint, type AlignmentRequest } from './aligner.js'

/** `AlignmentPoint.method` of a point found from the offset syncs (any other method came from the fallback). */
export const OFFSET_SYNC_ALIGNMENT_METHOD = 'offset sync'

/**
 * Aligns a source partition with its copy from the sidecar's offset syncs instead of by content:
 * the target offset of the first mirrored record at or after the requested source offset (its
 * newest copy when the mirror copied it twice). Where the syncs cannot say (no syncs for the
 * partition, or beyond what was mirrored), it asks `fallback` (e.g. the order aligner), or throws.
 *
 * Older copies of the compared range are located too (`earliestCopyOffset`): the lowest target
 * offset any range maps a compared source record to, and, when `fallback` finds a copy by content
 * (the order aligner's first common record) lower still, that one: a mirror killed before its first
 * offset syncs were durable left copies no sync describes.
 */
export class OffsetSyncAligner implements Aligner {
  readonly #index: OffsetSyncIndex
  readonly #sourceTopic: string
  readonly #fallback: Aligner | undefined

  constructor (index: OffsetSyncIndex, sourceTopic: string, fallback?: Aligner) {
    this.#index = index
    this.#sourceTopic = sourceTopic
    this.#fallback = fallback
  }

  async align (request: AlignmentRequest): Promise<AlignmentPoint> {
    const translation = this.#index.translate(this.#sourceTopic, request.sourcePartition, BigInt(request.sourceOffset))
    if (translation.status === 'translated') {
      const targetOffset = Number(translation.targetOffset)
      const synced = this.#earliestSyncedCopy(request)
      const found = await this.#fallback?.align(request)
      const byContent = found?.method === FIRST_COMMON_RECORD_METHOD ? found.targetOffset : undefined
      const earliest = Math.min(targetOffset, synced ?? targetOffset, byContent ?? targetOffset)
      return {
        sourceOffset: request.sourceOffset,
        targetPartition: request.sourcePartition,
        targetOffset,
        method: OFFSET_SYNC_ALIGNMENT_METHOD,
        ...(earliest < targetOffset ? { earliestCopyOffset: earliest } : {}),
      }
    }
    if (this.#fallback !== undefined) return await this.#fallback.align(request)
    throw new MirrorError(
      ErrorCodes.INTERNAL,
      `${this.#sourceTopic} partition ${request.sourcePartition} offset ${request.sourceOffset}: ${translation.status === 'no-syncs' ? 'no offset syncs for this partition' : 'not yet mirrored'}`
    )
  }

  /** The lowest target offset any range maps a source record of `sourceOffset..sourceUntilOffset-1` to. */
  #earliestSyncedCopy ({ sourcePartition, sourceOffset, sourceUntilOffset }: AlignmentRequest): number | undefined {
    const from = BigInt(sourceOffset)
    let lowest: bigint | undefined
    for (const range of this.#index.ranges(this.#sourceTopic, sourcePartition)) {
      const first = range.sourceStart > from ? range.sourceStart : from
      if (first >= range.sourceStart + range.length) continue
      if (sourceUntilOffset !== undefined && first >= BigInt(sourceUntilOffset)) continue
      const at = range.targetStart + (first - range.sourceStart)
      if (lowest === undefined || at < lowest) lowest = at
    }
    return lowest === undefined ? undefined : Number(lowest)
  }
}
