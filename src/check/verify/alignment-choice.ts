import type { ClusterConnection } from '../../config/cluster-connection.js'
import type { AuditClient } from '../../kafka/audit-client.js'
import { createLogger, silentLogger } from '../../shared/logger.js'
import { UsageError } from '../cli/exit-codes.js'
import { loadOffsetSyncs, offsetSyncsTopicName } from '../translate/offset-sync-store.js'
import { type Aligner, type AlignmentLookup, type AlignmentPoint, OrderAligner } from './aligner.js'
import { OFFSET_SYNC_ALIGNMENT_METHOD, OffsetSyncAligner } from './offset-sync-aligner.js'

/** What `chooseAlignment` reads, by the flags of `mirror-check verify` that give it (its messages name them). */
export interface AlignmentOptions {
  'offset-syncs': boolean
  'offset-syncs-topic'?: string | undefined
  'source-alias': string
  topic: string
  verbose: boolean
  'timeout-ms': number
}

/** Which alignment a partition used: the sidecar's offset syncs, or the order aligner (first common record). */
export type AlignedBy = 'offset-syncs' | 'order'

export function alignedBy (point: AlignmentPoint): AlignedBy {
  return point.method === OFFSET_SYNC_ALIGNMENT_METHOD ? 'offset-syncs' : 'order'
}

export interface AlignmentChoice {
  /** The offset-syncs topic read, when it exists on the target and syncs are not switched off. */
  readonly offsetSyncsTopic?: string
  /** Why every partition is aligned by order, when it is. */
  readonly orderReason?: string
  readonly aligner?: (lookup: AlignmentLookup) => Aligner
}

/**
 * Offset syncs when their topic is on the target (the exact target offset of each copy), with the
 * order aligner where they cannot answer; else the order aligner alone. The syncs are read at the
 * first alignment, after `--wait`, so they cover what was mirrored meanwhile.
 */
export async function chooseAlignment (
  args: AlignmentOptions,
  target: AuditClient,
  targetConnection: ClusterConnection,
  targetTopic: string,
  notes: string[]
): Promise<AlignmentChoice> {
  if (!args['offset-syncs']) return { orderReason: '--no-offset-syncs' }
  const topic = args['offset-syncs-topic'] ?? offsetSyncsTopicName(args['source-alias'])
  if (!(await target.hasTopic(topic))) {
    if (args['offset-syncs-topic'] !== undefined) {
      throw new UsageError(
        `--offset-syncs-topic "${topic}": no such topic on the target cluster (${targetConnection.brokers.join(',')}); check the name, or leave the flag out to align by order`
      )
    }
    return { orderReason: `no offset-syncs topic ${topic} on the target` }
  }
  const logger = args.verbose ? createLogger({ level: 'debug' }) : silentLogger
  // Read once per choice: cutover verifies partition by partition with the same syncs.
  let loaded: ReturnType<typeof loadOffsetSyncs> | undefined
  const load = async (order: Aligner): Promise<Aligner> => {
    const index = await (loaded ??= loadOffsetSyncs({ ...targetConnection, connectionTimeoutMs: args['timeout-ms'] }, topic, logger))
    const elsewhere = index
      .partitions()
      .filter(p => p.sourceTopic === args.topic)
      .flatMap(p => index.ranges(args.topic, p.partition))
      .find(r => r.targetTopic !== targetTopic)
    if (elsewhere === undefined) return new OffsetSyncAligner(index, args.topic, order)
    notes.push(`offset syncs in ${topic} map ${args.topic} to ${elsewhere.targetTopic}, not ${targetTopic}: aligned by order`)
    return order
  }
  return {
    offsetSyncsTopic: topic,
    aligner: lookup => {
      const order = new OrderAligner(lookup)
      let aligner: Promise<Aligner> | undefined
      return { align: async request => await (await (aligner ??= load(order))).align(request) }
    },
  }
}
