/**
 * MirrorMaker 2's own bookkeeping records, as its Java classes write them (Kafka's protocol types:
 * STRING = int16 length + UTF-8 bytes, INT16/INT32/INT64 big-endian):
 * - offset syncs (`OffsetSync`, topic `mm2-offset-syncs.<target alias>.internal`, by default on the
 *   source cluster): key {topic: STRING, partition: INT32} (the source topic), value
 *   {upstreamOffset: INT64, offset: INT64};
 * - checkpoints (`Checkpoint`, topic `<source alias>.checkpoints.internal` on the target): key
 *   {group: STRING, topic: STRING, partition: INT32} (the target topic), value
 *   {version: INT16 = 0} then {upstreamOffset: INT64, offset: INT64, metadata: STRING};
 * - heartbeats (`Heartbeat`, topic `heartbeats` on the target, replicated as `<alias>.heartbeats`
 *   under the default replication policy): key {sourceClusterAlias: STRING, targetClusterAlias:
 *   STRING}, value {version: INT16 = 0} then {timestamp: INT64} (ms since epoch).
 * Kafka's `connect-mirror-client` (`MirrorClient`, `RemoteClusterUtils`) reads the checkpoints and
 * heartbeats written with the encoders here, and MirrorMaker 2's checkpoint task (`OffsetSyncStore`)
 * the offset syncs (`mm2-offset-sync-emitter.ts`; on the target the topic is
 * `mm2-offset-syncs.<source alias>.internal`). Pure: a record that does not parse gives undefined
 * (readers skip it).
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

export interface Mm2HeartbeatRecord {
  readonly sourceClusterAlias: string
  readonly targetClusterAlias: string
  /** When it was emitted, ms since epoch. */
  readonly timestampMs: number
}

/** A record's key and value as written to a bookkeeping topic. */
export interface Mm2EncodedRecord {
  readonly key: Buffer
  readonly value: Buffer
}

/** The version header MirrorMaker 2 writes before a checkpoint's or a heartbeat's value (`VERSION = 0`). */
const VERSION = 0

/** MirrorMaker 2's heartbeats topic on every cluster (`ReplicationPolicy.heartbeatsTopic()`). */
export const MM2_HEARTBEATS_TOPIC = 'heartbeats'

/** Default name of a MirrorMaker 2 flow's offset-syncs topic (on the source cluster unless `offset-syncs.topic.location = target`). */
export function mm2OffsetSyncsTopicName (targetAlias: string): string {
  return `mm2-offset-syncs.${targetAlias}.internal`
}

/** Default name of a MirrorMaker 2 flow's checkpoints topic, on the target cluster. */
export function mm2CheckpointsTopicName (sourceAlias: string): string {
  return `${sourceAlias}.checkpoints.internal`
}

/** Writes Kafka's protocol types in order (`Struct.write`). */
class Writer {
  readonly #parts: Buffer[] = []
  int16 (v: number): this { const b = Buffer.alloc(2); b.writeInt16BE(v); this.#parts.push(b); return this }
  int32 (v: number): this { const b = Buffer.alloc(4); b.writeInt32BE(v); this.#parts.push(b); return this }
  int64 (v: bigint): this { const b = Buffer.alloc(8); b.writeBigInt64BE(v); this.#parts.push(b); return this }
  string (v: string): this {
    const bytes = Buffer.from(v, 'utf8')
    // Type.STRING refuses more than Short.MAX_VALUE bytes.
    if (bytes.length > 0x7fff) throw new RangeError(`string of ${bytes.length} bytes: MirrorMaker 2's STRING holds at most 32767`)
    this.int16(bytes.length)
    this.#parts.push(bytes)
    return this
  }

  bytes (): Buffer { return Buffer.concat(this.#parts) }
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
    if (v.int16() !== VERSION) return undefined
    const upstreamOffset = v.int64()
    const downstreamOffset = v.int64()
    const metadata = v.string()
    if (!k.done || !v.done) return undefined
    return { group, topic, partition, upstreamOffset, downstreamOffset, metadata }
  } catch {
    return undefined
  }
}

export function encodeMm2OffsetSync (sync: Mm2OffsetSyncRecord): Mm2EncodedRecord {
  return {
    key: new Writer().string(sync.topic).int32(sync.partition).bytes(),
    value: new Writer().int64(sync.upstreamOffset).int64(sync.downstreamOffset).bytes(),
  }
}

export function encodeMm2Checkpoint (checkpoint: Mm2CheckpointRecord): Mm2EncodedRecord {
  return {
    key: new Writer().string(checkpoint.group).string(checkpoint.topic).int32(checkpoint.partition).bytes(),
    value: new Writer().int16(VERSION).int64(checkpoint.upstreamOffset).int64(checkpoint.downstreamOffset).string(checkpoint.metadata).bytes(),
  }
}

export function encodeMm2Heartbeat (heartbeat: Mm2HeartbeatRecord): Mm2EncodedRecord {
  return {
    key: new Writer().string(heartbeat.sourceClusterAlias).string(heartbeat.targetClusterAlias).bytes(),
    value: new Writer().int16(VERSION).int64(BigInt(heartbeat.timestampMs)).bytes(),
  }
}

export function decodeMm2Heartbeat (key: Buffer | null, value: Buffer | null): Mm2HeartbeatRecord | undefined {
  if (key === null || value === null) return undefined
  try {
    const k = new Cursor(key)
    const sourceClusterAlias = k.string()
    const targetClusterAlias = k.string()
    const v = new Cursor(value)
    if (v.int16() !== VERSION) return undefined
    const timestampMs = Number(v.int64())
    if (!k.done || !v.done) return undefined
    return { sourceClusterAlias, targetClusterAlias, timestampMs }
  } catch {
    return undefined
  }
}
