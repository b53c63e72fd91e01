import { connectClient } from '../cli/cluster-args.js'
import type { GroupFailoverPlan } from '../translate/group-failover-plan.js'
import { chooseAlignment } from '../verify/alignment-choice.js'
import { collectMissingRecords } from '../verify/missing-records.js'
import type { FailoverArgs, Side } from './failover-args.js'

/** The mirror's consumer group on the source (the sidecar's default `group.id`), whose commits `--rpo` reads. */
const MIRROR_GROUP = 'mirror-sidecar'

/** Missing ranges listed in the notes of `failover --rpo`; `mirror-check rpo` lists them all. */
const RPO_RANGES_LISTED = 10

/**
 * The record-level RPO of the topics a failover moves (`--rpo`): per topic the source records not
 * on the target, as notes and as the JSON report's `rpo`.
 */
export async function failoverRpo (
  args: FailoverArgs,
  source: Side,
  target: Side,
  syncsTopic: string,
  plans: readonly GroupFailoverPlan[]
): Promise<{ notes: string[], json: Array<{ topic: string, targetTopic: string, missingRecords: number, ranges: unknown[] }> }> {
  const pairs = new Map(plans.flatMap(p => p.partitions.flatMap(r => (r.toTopic === undefined ? [] : [[r.topic, r.toTopic] as const]))))
  const notes: string[] = []
  const json: Array<{ topic: string, targetTopic: string, missingRecords: number, ranges: unknown[] }> = []
  const sourceClient = await connectClient(source.connection, args)
  try {
    const targetClient = await connectClient(target.connection, args)
    try {
      for (const [topic, targetTopic] of pairs) {
        const alignment = {
          'offset-syncs': true,
          'offset-syncs-topic': syncsTopic,
          'source-alias': args['source-alias'] ?? 'source',
          topic,
          verbose: args.verbose,
          'timeout-ms': args['timeout-ms'],
        }
        const choice = await chooseAlignment(alignment, targetClient, target.connection, targetTopic, notes)
        const { partitions } = await collectMissingRecords({
          source: sourceClient,
          target: targetClient,
          topic,
          targetTopic,
          group: MIRROR_GROUP,
          keys: false,
          ...(choice.aligner === undefined ? {} : { aligner: choice.aligner }),
        })
        const ranges = partitions.flatMap(p => p.ranges.map(r => ({ partition: p.partition, ...r })))
        const missing = partitions.reduce((n, p) => n + p.missing, 0)
        json.push({ topic, targetTopic, missingRecords: missing, ranges })
        const verdict = missing === 0 ? 'every source record up to the end offsets is on the target' : `${missing} source record(s) not on the target`
        notes.push(`mirror-check: rpo: ${topic}: ${verdict}`)
        for (const r of ranges.slice(0, RPO_RANGES_LISTED)) {
          notes.push(
            `mirror-check: rpo: ${topic}-${r.partition} offsets ${r.fromOffset}..${r.toOffset}: ${r.records} record(s), ${new Date(r.firstTimestampMs).toISOString()} .. ${new Date(r.lastTimestampMs).toISOString()}`
          )
        }
        if (ranges.length > RPO_RANGES_LISTED) {
          notes.push(`mirror-check: rpo: ${topic}: ${ranges.length - RPO_RANGES_LISTED} more range(s); mirror-check rpo lists them all`)
        }
      }
    } finally {
      await targetClient.close()
    }
  } finally {
    await sourceClient.close()
  }
  return { notes, json }
}
