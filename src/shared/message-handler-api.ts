import type { RecordHeader } from './record-header.js'

/**
 * The contract of a message handler module (`--message.handler ./handler.js`), as its author
 * sees it. The sidecar calls the module's function once per source record, in offset order per
 * partition, and writes what it returns to the target in its place. See docs/message-handler.md.
 */

/**
 * One source record, as handed to the handler: a fresh object per call, which the handler may
 * change and return. Offset and timestamp are decimal strings (exact past 2^53), as kafkajs gives
 * them; key and value are the record's bytes (null stays null); headers are every header in wire
 * order, repeated names and null values included.
 */
export interface HandlerRecord {
  topic: string
  partition: number
  offset: string
  /** Milliseconds since the epoch, as a decimal string. */
  timestamp: string
  key: Buffer | null
  value: Buffer | null
  headers: RecordHeader[]
}

/** Bytes as a handler may give them: a string is written as UTF-8. */
export type HandlerBytes = Buffer | Uint8Array | string | null

/** One header as a handler may give it. */
export interface HandlerHeader {
  readonly key: string
  readonly value: HandlerBytes
}

/**
 * One record to write, as a handler returns it. A field left out (undefined) keeps the source
 * record's; `null` key or value writes null. `topic` and `partition`, when present, must be the
 * source record's (so `{ ...record, value }` works): records stay in their source partition.
 * `offset` is ignored (the target assigns offsets).
 */
export interface HandlerOutput {
  readonly key?: HandlerBytes
  readonly value?: HandlerBytes
  /** In order; or grouped by name (`{ name: value | value[] }`, kafkajs' form). */
  readonly headers?: readonly HandlerHeader[] | Readonly<Record<string, HandlerBytes | readonly HandlerBytes[]>>
  /** Milliseconds since the epoch: a number, bigint, decimal string or Date. */
  readonly timestamp?: number | bigint | string | Date
  readonly topic?: string
  readonly partition?: number
  readonly offset?: unknown
}

/**
 * What a handler returns for one record: the record(s) to write in its place, in order; `null`
 * or `[]` to write nothing (filter). `undefined` is refused, so a handler that forgets to return
 * stops the mirror instead of silently dropping everything. A promise of any of these is awaited.
 */
export type HandlerResult = HandlerOutput | readonly HandlerOutput[] | null

/** The second argument of every call. */
export interface HandlerContext {
  /** `--message.handler.args` as given (MirrorMaker 1's flag); undefined when not given. */
  readonly args: string | undefined
  /** The flow the record comes through, e.g. `source->target`. */
  readonly flow: string
}

/** The function a handler module exports, as `handle` or as its default export. */
export type MessageHandlerFunction = (record: HandlerRecord, context: HandlerContext) => HandlerResult | Promise<HandlerResult>
