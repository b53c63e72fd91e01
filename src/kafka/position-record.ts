/**
 * The records of the positions topic (exactly-once): key `{"group","topic","partition"}`, value
 * `{"offset"}` (a decimal string: the next source offset to mirror). JSON, so `kcat` shows them.
 * The topic is compacted: the last position of a partition stays.
 */
export interface PositionRecord {
  readonly group: string
  readonly topic: string
  readonly partition: number
  readonly offset: bigint
}

export function encodePosition (position: PositionRecord): { key: string, value: string } {
  return {
    key: JSON.stringify({ group: position.group, topic: position.topic, partition: position.partition }),
    value: JSON.stringify({ offset: position.offset.toString() }),
  }
}

/** The position in a record of the positions topic; undefined for anything else (a tombstone, a foreign record). */
export function decodePosition (key: Buffer | null, value: Buffer | null): PositionRecord | undefined {
  if (key === null || value === null) return undefined
  try {
    const k = JSON.parse(key.toString('utf8')) as { group?: unknown, topic?: unknown, partition?: unknown }
    const v = JSON.parse(value.toString('utf8')) as { offset?: unknown }
    if (
      typeof k.group !== 'string' ||
      typeof k.topic !== 'string' ||
      typeof k.partition !== 'number' ||
      typeof v.offset !== 'string' ||
      !/^\d+$/.test(v.offset)
    ) { return undefined }
    return { group: k.group, topic: k.topic, partition: k.partition, offset: BigInt(v.offset) }
  } catch {
    return undefined
  }
}
