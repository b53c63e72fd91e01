import type { AuditClient } from '../kafka/audit-client.js'
import { partitionKey } from '../shared/partition-key.js'

/** One source partition's position as MirrorMaker 2 stored it: the next source offset it would copy. */
export interface Mm2SourcePosition {
  readonly topic: string
  readonly partition: number
  /** The stored offset + 1 (`MirrorSourceTask` seeks there on start); undefined when the record removes the position. */
  readonly next: bigint | undefined
}

/**
 * Decodes one record of Connect's offsets topic as a position of `connector` copying from
 * `sourceAlias`: key `["<connector>", {"cluster", "partition", "topic"}]` (Connect's JSON, any
 * field order), value `{"offset": <last copied offset>}`. A null value (a reset offset, KIP-875)
 * or a negative offset (`MirrorSourceTask` seeks nowhere for it) removes the position. Undefined
 * for the records of other connectors, other clusters, or anything else.
 */
export function decodeMm2SourcePosition (key: Buffer | null, value: Buffer | null, connector: string, sourceAlias: string): Mm2SourcePosition | undefined {
  if (key === null) return undefined
  let parsedKey: unknown
  try {
    parsedKey = JSON.parse(key.toString('utf8'))
  } catch {
    // Not Connect's JSON: a record of something else sharing the topic.
    return undefined
  }
  if (!Array.isArray(parsedKey) || parsedKey.length !== 2 || parsedKey[0] !== connector) return undefined
  const where = parsedKey[1] as { cluster?: unknown, topic?: unknown, partition?: unknown } | null
  if (
    where === null ||
    typeof where !== 'object' ||
    where.cluster !== sourceAlias ||
    typeof where.topic !== 'string' ||
    !Number.isSafeInteger(where.partition)
  ) {
    return undefined
  }
  const at = { topic: where.topic, partition: where.partition as number }
  if (value === null) return { ...at, next: undefined }
  let offset: unknown
  try {
    offset = (JSON.parse(value.toString('utf8')) as { offset?: unknown } | null)?.offset
  } catch {
    // A value Connect did not write: no position.
    return { ...at, next: undefined }
  }
  return { ...at, next: typeof offset === 'number' && Number.isSafeInteger(offset) && offset >= 0 ? BigInt(offset) + 1n : undefined }
}

/**
 * Reads every decided record of `topic` (all partitions, read_committed up to each partition's
 * last stable offset) in offset order per partition. An exactly-once MirrorMaker 2 writes its
 * positions in the transactions of its records: an aborted one is skipped, as Connect skips it.
 */
export async function readDecided (client: AuditClient, topic: string, onRecord: (key: Buffer | null, value: Buffer | null) => void): Promise<void> {
  const partitions = await client.partitionsOf(topic, topic)
  const [starts, ends] = await Promise.all([
    client.listOffsets(topic, partitions, 'earliest'),
    client.listOffsets(topic, partitions, 'latest', 'read_committed'),
  ])
  for (const partition of partitions) {
    let offset = starts.get(partition) ?? 0
    const end = ends.get(partition) ?? 0
    while (offset < end) {
      const fetched = await client.fetch(topic, partition, offset, { isolation: 'read_committed' })
      for (const record of fetched.records) if (Number(record.offset) < end) onRecord(record.key, record.value)
      // Past control batches and aborted data a fetch may return nothing and still move on; a fetch that moves nothing steps one offset.
      offset = fetched.nextOffset > offset ? fetched.nextOffset : offset + 1
    }
  }
}

/**
 * MirrorMaker 2's positions of the flow from `sourceAlias` (its `connector`) in Connect's offsets
 * topic on the target, by `partitionKey`: the newest record of each partition wins. Empty when the
 * topic does not exist (MirrorMaker 2 never ran into that target, or under another name).
 */
export async function readMm2SourcePositions (
  target: AuditClient,
  offsetsTopic: string,
  connector: string,
  sourceAlias: string
): Promise<Map<string, { readonly topic: string, readonly partition: number, readonly next: bigint }>> {
  const positions = new Map<string, { topic: string, partition: number, next: bigint }>()
  if (!(await target.hasTopic(offsetsTopic))) return positions
  await readDecided(target, offsetsTopic, (key, value) => {
    const position = decodeMm2SourcePosition(key, value, connector, sourceAlias)
    if (position === undefined) return
    const at = partitionKey(position.topic, position.partition)
    if (position.next === undefined) positions.delete(at)
    else positions.set(at, { topic: position.topic, partition: position.partition, next: position.next })
  })
  return positions
}
