import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import kafkajs, {
  type ForwardedBatchMessage,
  type Kafka,
  type Message,
  type Producer,
  type RecordBatchMessage,
  type SendFailure,
} from '@kafka-mirror-sidecar/kafkajs'
import type { KafkaRecord } from '../shared/kafka-record.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { RecordHeader } from '../shared/record-header.js'
import { FetchSessions } from './fetch-session.js'

/*
 * Everything the project takes from kafkajs beyond its public API, in one place: kafkajs 2.2.4 is
 * frozen upstream, and patches/kafkajs+2.2.4.patch changes it. The package runs its own copy,
 * the dependency `@kafka-mirror-sidecar/kafkajs` (an npm alias of kafkajs 2.2.4), patched at
 * install by scripts/patch-kafkajs.mjs: an application's own `kafkajs` is neither used nor changed.
 * A kafkajs upgrade starts here.
 */

const require = createRequire(import.meta.url)

/** The kafkajs version the patch and the private shapes below were written for. */
const KAFKAJS_VERSION = '2.2.4'

/** The package name of the mirror's own (patched) kafkajs: an npm alias of kafkajs 2.2.4. */
const PATCHED_KAFKAJS = '@kafka-mirror-sidecar/kafkajs'

/** The step that patches it (the package's postinstall), for the line that says to run it. */
const PATCH_STEP = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'scripts', 'patch-kafkajs.mjs')

/** What a missing or changed patch asks the user to do. */
const REINSTALL = `run node ${PATCH_STEP} (the package's install step, skipped by --ignore-scripts)`

/** A record as kafkajs' Fetch decoder returns it. */
export interface InternalRecord {
  offset: string
  timestamp: string
  key: Buffer | null
  value: Buffer | null
  headers: Record<string, Buffer | Buffer[]>
  /** Every header in wire order (added by the project's kafkajs patch). */
  headerList?: RecordHeader[]
  isControlRecord: boolean
  batchContext: { firstOffset: string, lastOffsetDelta: number, producerId: string, inTransaction: boolean }
}

/** One partition of kafkajs' decoded Fetch response. */
export interface InternalFetchPartition {
  partition: number
  errorCode: number
  highWatermark: string
  lastStableOffset: string
  lastStartOffset: string
  abortedTransactions: Array<{ producerId: string, firstOffset: string }>
  messages: InternalRecord[]
}

/** kafkajs' broker object: the requests sent as they are, with our own isolation level. */
export interface InternalBroker {
  fetch: (request: unknown) => Promise<{ responses: Array<{ topicName: string, partitions: InternalFetchPartition[] }> }>
  listOffsets: (
    request: unknown,
  ) => Promise<{ responses: Array<{ topic: string, partitions: Array<{ partition: number, offset: string, errorCode: number }> }> }>
}

/** kafkajs' group coordinator as a broker: the OffsetCommit request without joining the group. */
export interface InternalCoordinator {
  offsetCommit: (request: {
    groupId: string
    groupGenerationId: number
    memberId: string
    topics: Array<{ topic: string, partitions: Array<{ partition: number, offset: string }> }>
  }) => Promise<unknown>
}

/**
 * A request as kafkajs' connection sends it: `encode` gives the body, `decode` and `parse` read
 * the answer (`parse` throws a partition's or resource's error).
 */
export interface ProtocolRequest {
  readonly request: { readonly apiKey: number, readonly apiVersion: number, readonly apiName: string, encode: () => Promise<ProtocolEncoder> }
  readonly response: { decode: (bytes: Buffer) => Promise<unknown>, parse: (decoded: unknown) => Promise<unknown> }
}

/** kafkajs' protocol encoder (`protocol/encoder.js`), the part used here. */
export interface ProtocolEncoder {
  writeInt8: (value: number) => ProtocolEncoder
  writeString: (value: string | null) => ProtocolEncoder
  writeBoolean: (value: boolean) => ProtocolEncoder
  writeArray: (values: ProtocolEncoder[]) => ProtocolEncoder
  /** `value`'s bytes as they are, copied into the request. */
  writeBuffer: (value: Buffer) => ProtocolEncoder
  writeInt32: (value: number) => ProtocolEncoder
  writeUVarInt: (value: number) => ProtocolEncoder
  /** A COMPACT_STRING of the flexible versions (length + 1 as an unsigned varint). */
  writeUVarIntString: (value: string | null) => ProtocolEncoder
  /** A COMPACT_ARRAY of encoded structs. */
  writeUVarIntArray: (values: ProtocolEncoder[], type: 'object') => ProtocolEncoder
}

/** kafkajs' protocol decoder (`protocol/decoder.js`), the part used here. */
export interface ProtocolDecoder {
  readInt8: () => number
  readInt16: () => number
  readInt32: () => number
  readString: () => string | null
  readBytes: () => Buffer | null
  readArray: <T>(read: (decoder: ProtocolDecoder) => T) => T[]
  /** An INT64 as a decimal string. */
  readInt64: () => { toString: () => string }
  /** A COMPACT_(NULLABLE_)STRING. */
  readUVarIntString: () => string | null
  /** A COMPACT_ARRAY (null for a null array). */
  readUVarIntArray: <T>(read: (decoder: ProtocolDecoder) => T) => T[] | null
  /** The tagged fields of a flexible struct, skipped. */
  readTaggedFields: () => unknown
}

/** kafkajs' encoder and decoder, and the error of a Kafka error code (undefined for none). */
export const kafkajsProtocol = {
  encoder: (): ProtocolEncoder => new (require(`${PATCHED_KAFKAJS}/src/protocol/encoder`) as new () => ProtocolEncoder)(),
  decoder: (bytes: Buffer): ProtocolDecoder => new (require(`${PATCHED_KAFKAJS}/src/protocol/decoder`) as new (bytes: Buffer) => ProtocolDecoder)(bytes),
  errorOf: (code: number): Error | undefined => {
    const { failure, createErrorFromCode } = require(`${PATCHED_KAFKAJS}/src/protocol/error`) as {
      failure: (code: number) => boolean
      createErrorFromCode: (code: number) => Error
    }
    return failure(code) ? createErrorFromCode(code) : undefined
  },
}

/** A broker of kafkajs' cluster that sends a request kafkajs has no method for (the `private:Broker:sendRequest` symbol). */
export interface RequestBroker {
  /**
   * Sends the request built by `protocol` for the highest of `versions` the broker supports; throws
   * kafkajs' `KafkaJSServerDoesNotSupportApiKey` when it supports none.
   */
  send: (apiKey: number, versions: readonly number[], protocol: (version: number) => ProtocolRequest) => Promise<unknown>
  /** The broker's answer to ApiVersions (read when kafkajs connected to it): the versions of each API key it serves. */
  readonly apiVersions: ReadonlyMap<number, { readonly minVersion: number, readonly maxVersion: number }>
}

/** Whether `error` says the broker does not know the request's API key (an older broker). */
export function isUnsupportedRequest (error: unknown): boolean {
  return (error as { name?: string } | null)?.name === 'KafkaJSServerDoesNotSupportApiKey'
}

/** The controller of `cluster` (in KRaft, any broker: it forwards to the controller) as a `RequestBroker`. */
export async function controllerRequestBroker (cluster: InternalCluster): Promise<RequestBroker> {
  // The controller's id comes from the metadata: loaded once, then again only when older than metadataMaxAge.
  await cluster.refreshMetadataIfNecessary()
  return asRequestBroker(await cluster.findControllerBroker())
}

/** The coordinator of `groupId` on `cluster` as a `RequestBroker` (group requests such as DescribeGroups go to it). */
export async function coordinatorRequestBroker (cluster: InternalCluster, groupId: string): Promise<RequestBroker> {
  return asRequestBroker(await cluster.findGroupCoordinator({ groupId }) as unknown as InternalRequestBroker)
}

/** `broker`, one of kafkajs' broker objects, as a `RequestBroker`. */
function asRequestBroker (broker: InternalRequestBroker): RequestBroker {
  const symbol = Object.getOwnPropertySymbols(Object.getPrototypeOf(broker)).find(s => s.description === 'private:Broker:sendRequest')
  if (symbol === undefined) {
    throw new MirrorError(ErrorCodes.INTERNAL, `kafkajs internals changed: no private broker send (expected kafkajs ${KAFKAJS_VERSION}); ${REINSTALL}`)
  }
  const sendRequest = (broker as unknown as Record<symbol, (request: ProtocolRequest) => Promise<unknown>>)[symbol]!.bind(broker)
  const apiVersions = new Map(Object.entries(broker.versions ?? {}).map(([key, v]) => [Number(key), { minVersion: v.minVersion, maxVersion: v.maxVersion }]))
  return {
    apiVersions,
    send: async (apiKey, versions, protocol) => {
      const factory = broker.lookupRequest(apiKey, { versions: versions.map(String), protocol: ({ version }) => () => protocol(version) })
      return await sendRequest(factory())
    },
  }
}

/** The leaders of `partitions` of `topic`, each as a `RequestBroker` with its partitions (for requests only a leader answers). */
export async function leaderRequestBrokers (cluster: InternalCluster, topic: string, partitions: readonly number[]): Promise<Array<[RequestBroker, number[]]>> {
  await cluster.addMultipleTargetTopics([topic])
  const byLeader = cluster.findLeaderForPartitions(topic, [...partitions])
  return await Promise.all(
    Object.entries(byLeader).map(async ([nodeId, list]) =>
      [asRequestBroker((await cluster.findBroker({ nodeId })) as unknown as InternalRequestBroker), list] as [RequestBroker, number[]])
  )
}

/** kafkajs' broker object, the part `asRequestBroker` uses. */
interface InternalRequestBroker {
  lookupRequest: (
    apiKey: number,
    definitions: { versions: string[], protocol: (options: { version: number }) => () => ProtocolRequest }
  ) => () => ProtocolRequest
  /** ApiVersions' answer by API key, set when kafkajs connected to the broker. */
  versions?: Record<string, { minVersion: number, maxVersion: number }> | null
}

/** kafkajs' cluster object (metadata, brokers by node id, coordinators), the part used here. */
export interface InternalCluster {
  findControllerBroker: () => Promise<InternalRequestBroker>
  refreshMetadataIfNecessary: () => Promise<void>
  connect: () => Promise<void>
  disconnect: () => Promise<void>
  addMultipleTargetTopics: (topics: string[]) => Promise<void>
  refreshMetadata: () => Promise<void>
  /** A Metadata request of every topic (the cached metadata is refreshed first only when older than `metadataMaxAge`). */
  metadata: () => Promise<{ topicMetadata: Array<{ topic: string, partitionMetadata: Array<{ partitionId: number, leader: number }> }> }>
  findLeaderForPartitions: (topic: string, partitions: number[]) => Record<string, number[]>
  findBroker: (options: { nodeId: string }) => Promise<InternalBroker>
  findGroupCoordinator: (request: { groupId: string }) => Promise<InternalCoordinator>
  findGroupCoordinatorMetadata: (options: { groupId: string }) => Promise<{ coordinator: { nodeId: number, host: string, port: number } }>
}

/** Options of kafkajs' private cluster factory. */
export interface InternalClusterOptions {
  /** Default false here: an audit or an offset write never creates a topic. */
  readonly allowAutoTopicCreation?: boolean
  readonly metadataMaxAge?: number
}

/**
 * A cluster object of `kafka`, from kafkajs' private factory (the `private:Kafka:createCluster`
 * symbol): kafkajs has no public API for Fetch with a chosen isolation level, ListOffsets, or an
 * OffsetCommit outside a group. The caller connects and disconnects it.
 */
export function createInternalCluster (kafka: Kafka, options: InternalClusterOptions = {}): InternalCluster {
  const symbol = Object.getOwnPropertySymbols(kafka).find(s => s.description === 'private:Kafka:createCluster')
  if (symbol === undefined) {
    throw new MirrorError(ErrorCodes.INTERNAL, `kafkajs internals changed: no private cluster factory (expected kafkajs ${KAFKAJS_VERSION}); ${REINSTALL}`)
  }
  const factory = (kafka as unknown as Record<symbol, (options: object) => InternalCluster>)[symbol]!
  return factory({ allowAutoTopicCreation: false, ...options })
}

/**
 * The partitions a failed kafkajs `send`/`sendBatch` did write before it gave up: each written
 * partition's answer, which the project's patch of `producer/sendMessages.js` attaches to the
 * error as `writtenPartitions`. Empty when none was written (or the error came from elsewhere).
 */
export function writtenBeforeFailure (error: unknown): Array<{ topic: string, partition: number, baseOffset: bigint }> {
  const answers = (error as SendFailure | null | undefined)?.writtenPartitions
  if (!Array.isArray(answers)) return []
  const written: Array<{ topic: string, partition: number, baseOffset: bigint }> = []
  for (const answer of answers) {
    if (answer.errorCode !== 0 || answer.baseOffset == null) continue
    written.push({ topic: answer.topicName, partition: answer.partition, baseOffset: BigInt(answer.baseOffset) })
  }
  return written
}

/**
 * The partitions a failed kafkajs `send`/`sendBatch` did not write in its last attempt, each with
 * the error of its own (the broker's answer for it, or the failure of the request that held it):
 * what the project's patch of `producer/sendMessages.js` attaches as `partitionErrors`. Empty when
 * the error came from elsewhere (then every unwritten partition failed with the error itself).
 */
export function partitionErrorsOf (error: unknown): Array<{ topic: string, partition: number, error: unknown }> {
  const failures = (error as SendFailure | null | undefined)?.partitionErrors
  if (!Array.isArray(failures)) return []
  return failures.map(failure => ({ topic: failure.topicName, partition: failure.partition, error: failure.error }))
}

/**
 * The headers to hand kafkajs' producer for `record`: the wire-order list when known (the patched
 * record encoder takes a list, repeated names and null values included), else the grouped form.
 */
export function producerHeaders (record: KafkaRecord): Message['headers'] {
  return (record.headerList ?? record.headers) as Message['headers']
}

/** kafkajs' own filter of records of aborted transactions, as its read_committed consumer applies it. */
export const filterAbortedMessages = require(`${PATCHED_KAFKAJS}/src/consumer/filterAbortedMessages`) as (options: {
  messages: InternalRecord[]
  abortedTransactions: unknown[]
}) => InternalRecord[]

/** The parts of one kafkajs installation that the patch changes: its version, and its record encoder and decoder. */
export interface KafkajsRecordCodec {
  readonly version: string
  /** kafkajs' record encoder (`protocol/recordBatch/record/v0`): the record's bytes, length prefix included. */
  readonly encodeRecord: (record: { key: Buffer | null, value: Buffer | null, headers: readonly RecordHeader[] }) => Buffer
  /** kafkajs' record decoder (`protocol/recordBatch/record/v0/decoder`) over what `encodeRecord` wrote. */
  readonly decodeRecord: (bytes: Buffer) => { headers?: unknown, headerList?: unknown }
}

/** The record codec of the kafkajs package whose `package.json` is at `packageJsonPath` (default: the one this project runs). */
export function kafkajsRecordCodec (packageJsonPath: string = require.resolve(`${PATCHED_KAFKAJS}/package.json`)): KafkajsRecordCodec {
  const root = dirname(packageJsonPath)
  const load = createRequire(packageJsonPath)
  type Encoded = { buffer: Buffer }
  type Decoder = { readVarIntBytes: () => Buffer }
  const encode = load(`${root}/src/protocol/recordBatch/record/v0`) as (record: object) => Encoded
  const decode = load(`${root}/src/protocol/recordBatch/record/v0/decoder`) as (
    decoder: Decoder,
    context: object,
  ) => { headers?: unknown, headerList?: unknown }
  const DecoderClass = load(`${root}/src/protocol/decoder`) as new (bytes: Buffer) => Decoder
  return {
    version: (load(packageJsonPath) as { version: string }).version,
    encodeRecord: record => encode({ ...record, headers: [...record.headers] }).buffer,
    decodeRecord: bytes => decode(new DecoderClass(new DecoderClass(bytes).readVarIntBytes()), { firstOffset: '0', firstTimestamp: '0' }),
  }
}

/**
 * Why `codec` is not the patched kafkajs the mirror needs, or undefined when it is. The check
 * writes one record whose headers are a list (a repeated name around another one, a null value)
 * and reads it back: without the patch the encoder refuses the list and the decoder keeps no
 * `headerList`, and the copy would lose header order or fail on a null header.
 */
export function kafkajsPatchProblem (codec: KafkajsRecordCodec): string | undefined {
  if (codec.version !== KAFKAJS_VERSION) return `kafkajs ${codec.version} is installed, the patch is for ${KAFKAJS_VERSION}`
  const headers: RecordHeader[] = [{ key: 'a', value: Buffer.from('1') }, { key: 'b', value: null }, { key: 'a', value: Buffer.from('2') }]
  let decoded: { headerList?: unknown }
  try {
    decoded = codec.decodeRecord(codec.encodeRecord({ key: null, value: Buffer.from('v'), headers }))
  } catch {
    return 'its record encoder refuses headers given as a list'
  }
  if (!Array.isArray(decoded.headerList)) return 'its record decoder keeps no headerList'
  const read = decoded.headerList as Array<{ key?: unknown, value?: unknown }>
  const same = read.length === headers.length && headers.every((h, i) => read[i]?.key === h.key &&
    (h.value === null ? read[i]?.value === null : Buffer.isBuffer(read[i]?.value) && h.value.equals(read[i]?.value as Buffer)))
  return same ? undefined : 'its headerList does not give back the headers in the order written'
}

let patched = false

/**
 * Throws a `MirrorError` (code `MIRROR_CONFIG`) with one line saying to run the install step when
 * the package's own kafkajs lacks patches/kafkajs+2.2.4.patch (installed with --ignore-scripts). Called at start-up by both commands; checks once.
 */
export function assertKafkajsPatched (codec?: KafkajsRecordCodec): void {
  if (patched && codec === undefined) return
  let problem: string | undefined
  try {
    problem = kafkajsPatchProblem(codec ?? kafkajsRecordCodec())
  } catch (error) {
    problem = `its record codec cannot be loaded: ${(error as Error).message.split('\n')[0]}`
  }
  if (problem !== undefined) {
    throw new MirrorError(
      ErrorCodes.CONFIG,
      `kafkajs is not patched (${problem}; patches/kafkajs+${KAFKAJS_VERSION}.patch is applied to ${PATCHED_KAFKAJS} at install): ${REINSTALL}`
    )
  }
  if (codec === undefined) patched = true
}

/**
 * Record batch forwarding (pass-through): the consumer option (and `broker.fetch` field)
 * `forwardRecordBatch` the patch adds. The patched Fetch decoder
 * (`protocol/requests/fetch/v4/decodeMessages.js`) offers each complete v2 batch, as bytes, to it:
 * an object it returns stands for the whole batch among the fetched messages (undecoded);
 * undefined lets kafkajs decode the batch as before.
 */
export type BatchForwardingHook = (batchBytes: Buffer) => object | undefined

/**
 * The object `forwardRecordBatch` returned for the batch that `message` stands for (the patch's
 * `ForwardedBatchMessage`, which kafkajs builds from the batch header so that its consumer's
 * offset bookkeeping and aborted-transaction filter apply to the batch), or undefined when
 * `message` is a decoded record.
 */
export function forwardedBatchOf<T extends object> (message: KafkaRecord | ForwardedBatchMessage<T>): T | undefined {
  return (message as Partial<ForwardedBatchMessage<T>>).forwardedBatch
}

/**
 * A kafkajs producer message that is a whole record batch, encoded already (`RecordBatchMessage`,
 * which the patch adds to the producer): the patched produce request
 * (`protocol/requests/produce/v3/request.js`) asks `encodeBatch` for its bytes with the request's
 * producer id, epoch and first sequence; the patched `producer/sendMessages.js` moves the
 * partition's sequence on by `recordCount`. It must be the only message of its partition in a send.
 */
export type EncodedBatchMessage = RecordBatchMessage

/** The records of one whole v2 batch (`bytes`), through kafkajs' record batch decoder (registered codecs). */
export async function decodeRecordBatch (bytes: Buffer): Promise<readonly KafkaRecord[]> {
  const Decoder = require(`${PATCHED_KAFKAJS}/src/protocol/decoder`) as new (bytes: Buffer) => object
  const decodeBatch = require(`${PATCHED_KAFKAJS}/src/protocol/recordBatch/v0/decoder`) as (decoder: object) => Promise<{ records: KafkaRecord[] }>
  return (await decodeBatch(new Decoder(bytes))).records
}

/**
 * The records section of a v2 batch with `attributes`, decompressed by the codec kafkajs has
 * registered for it (ours, `registerCodecs`); the section as it is when uncompressed.
 */
export async function decompressRecords (attributes: number, section: Buffer): Promise<Buffer> {
  const { lookupCodecByAttributes } = require(`${PATCHED_KAFKAJS}/src/protocol/message/compression`) as {
    lookupCodecByAttributes: (attributes: number) => { decompress: (buffer: Buffer) => Promise<Buffer> } | null
  }
  const codec = lookupCodecByAttributes(attributes)
  return codec === null ? section : await codec.decompress(section)
}

/**
 * `section` (the uncompressed records section of a v2 batch) compressed by the codec kafkajs has
 * registered for codec id `codec` (ours, `registerCodecs`; gzip is kafkajs' own, node:zlib); the
 * section as it is for codec 0 (none).
 */
export async function compressRecords (codec: number, section: Buffer): Promise<Buffer> {
  const { lookupCodec } = require(`${PATCHED_KAFKAJS}/src/protocol/message/compression`) as {
    lookupCodec: (type: number) => { compress: (encoder: { buffer: Buffer }) => Promise<Buffer> } | null
  }
  if (codec === 0) return section
  const found = lookupCodec(codec)
  if (found === null) throw new MirrorError(ErrorCodes.INTERNAL, `no compression codec ${codec} is registered with kafkajs`)
  return await found.compress({ buffer: section })
}

/** The producer id of an idempotent kafkajs producer after `connect` (the patch's `producerIdentity`); undefined before or when not idempotent. */
export function producerIdOf (producer: Producer): bigint | undefined {
  const id = BigInt(producer.producerIdentity().producerId)
  return id < 0n ? undefined : id
}

/**
 * Makes kafkajs' record batch encoder compute each batch's CRC-32C with `crc32c` instead of its
 * JavaScript code: `useCrc32c`, which the patch adds to the package's exports. The mirror's kafkajs
 * is its own copy, so no other user of kafkajs is affected and the call works whenever it is made.
 */
export function useKafkajsCrc32c (crc32c: (bytes: Buffer) => number): void {
  kafkajs.useCrc32c(crc32c)
}

/**
 * The kafkajs consumer option the patch adds (`createFetchSessions`, passed through
 * `consumer/index.js` to `consumer/consumerGroup.js`): each consumer group instance kafkajs makes
 * (one per start or restart of `run`) fetches in incremental fetch sessions (KIP-227), one per
 * broker, kept by `FetchSessions`. Spread into the options of `kafka.consumer`; `onCreate` sees
 * each new set of sessions (their counts).
 */
export function fetchSessionsOption (onCreate?: (sessions: FetchSessions) => void): { createFetchSessions: () => FetchSessions } {
  return {
    createFetchSessions: () => {
      const sessions = new FetchSessions()
      onCreate?.(sessions)
      return sessions
    },
  }
}
