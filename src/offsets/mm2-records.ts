/**
 * MirrorMaker 2's own bookkeeping records, as its Java classes write them (Kafka's protocol types:
 * STRING = int16 length + UTF-8 bytes, INT16/INT32/INT64 big-endian):
 * - offset syncs (`OffsetSync`, topic `mm2-offset-syncs.<target alias>.internal`, by default on the
 *   source cluster): key {topic: STRING, partition: INT32} (the source topic), value
 *   {upstreamOffset: INT64, offset: INT64};
 * - checkpoints (`Checkpoint`, topic `<source alias>.checkpoints.internal` on the target): key
 *   {group: STRING, topic: STRING, partition: INT32} (the target topic), value
 *   {version: INT16 = 0} then {upstreamOffset: INT64, offset: INT64, metadata: STRING}.
 * Pure: a record that does not parse gives undefined (readers skip it).
 */

export interface Mm2OffsetSyncRecord {
  readonly topic: string
  readonly partition: number
  readonly upstreamOffset: bigint
  readonly downstreamOffset: bigint
}

export interface Mm2CheckpointRecord {
  readonly group: string
  /** The topic on the target (renamed by the replication policy). */
  readonly topic: string
  readonly partition: number
  /** The group's committed offset on the source. */
  readonly upstreamOffset: bigint
  /** MirrorMaker 2's translation of it on the target. */
  readonly downstreamOffset: bigint
  readonly metadata: string
}

/** Default name of a MirrorMaker 2 flow's offset-syncs topic (on the source cluster unless `offset-syncs.topic.location = target`). */
export function mm2OffsetSyncsTopicName (targetAlias: string): string {
  return `mm2-offset-syncs.${targetAlias}.internal`
}

/** Default name of a MirrorMaker 2 flow's checkpoints topic, on the target cluster. */
export function mm2CheckpointsTopicName (sourceAlias: string): string {
  return `${sourceAlias}.checkpoints.internal`
}

class Cursor {
  #at = 0
  constructor (readonly bytes: Buffer) {}
  get done (): boolean { return this.#at === this.bytes.length }
  #need (n: number): void {
    if (this.#at + n > this.bytes.length) throw new RangeError('truncated')
  }

  int16 (): number { this.#need(2); const v = this.bytes.readInt16BE(this.#at); this.#at += 2; return v }
  int32 (): number { this.#need(4); const v = this.bytes.readInt32BE(this.#at); this.#at += 4; return v }
  int64 (): bigint { this.#need(8); const v = this.bytes.readBigInt64BE(this.#at); this.#at += 8; return v }
  string (): string {
    const length = this.int16()
    if (length < 0) throw new RangeError('null string')
    this.#need(length)
    const v = this.bytes.toString('utf8', this.#at, this.#at + length)
    this.#at += length
    return v
  }
}

export function decodeMm2OffsetSync (key: Buffer | null, value: Buffer | null): Mm2OffsetSyncRecord | undefined {
  if (key === null || value === null) return undefined
  try {
    const k = new Cursor(key)
    const topic = k.string()
    const partition = k.int32()
    const v = new Cursor(value)
    const upstreamOffset = v.int64()
    const downstreamOffset = v.int64()
    if (!k.done || !v.done) return undefined
    return { topic, partition, upstreamOffset, downstreamOffset }
  } catch {
    return undefined
  }
}

export function decodeMm2Checkpoint (key: Buffer | null, value: Buffer | null): Mm2CheckpointRecord | undefined {
  if (key === null || value === null) return undefined
  try {
    const k = new Cursor(key)
    const group = k.string()
    const topic = k.string()
    const partition = k.int32()
    const v = new Cursor(value)
    if (v.int16() !== 0) return undefined
    const upstreamOffset = v.int64()
    const downstreamOffset = v.int64()
    const metadata = v.string()
    if (!k.done || !v.done) return undefined
    return { group, topic, partition, upstreamOffset, downstreamOffset, metadata }
  } catch {
    return undefined
  }
}
