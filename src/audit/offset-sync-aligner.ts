import type { OffsetSyncIndex } from '../offsets/offset-sync-index.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Aligner, AlignmentPoint, AlignmentRequest } from './aligner.js'

/** `AlignmentPoint.method` of a point found from the offset syncs (any other method came from the fallback). */
export const OFFSET_SYNC_ALIGNMENT_METHOD = 'offset sync'

/**
 * Aligns a source partition with its copy from the sidecar's offset syncs instead of by content:
 * the target offset of the first mirrored record at or after the requested source offset (its
 * newest copy when the mirror copied it twice). Where the syncs cannot say (no syncs for the
 * partition, or beyond what was mirrored), it asks `fallback` (e.g. the order aligner), or throws.
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
      return { sourceOffset: request.sourceOffset, targetPartition: request.sourcePartition, targetOffset: Number(translation.targetOffset), method: OFFSET_SYNC_ALIGNMENT_METHOD }
    }
    if (this.#fallback !== undefined) return await this.#fallback.align(request)
    throw new MirrorError(ErrorCodes.INTERNAL, `${this.#sourceTopic} partition ${request.sourcePartition} offset ${request.sourceOffset}: ${translation.status === 'no-syncs' ? 'no offset syncs for this partition' : 'not yet mirrored'}`)
  }
}
