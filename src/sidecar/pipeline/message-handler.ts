import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import type { HeaderValue, KafkaRecord } from '../../shared/kafka-record.js'
import type { HandlerContext, HandlerRecord, MessageHandlerFunction } from '../../shared/message-handler-api.js'
import type { RecordHeader } from '../../shared/record-header.js'
import type { FetchedBatch } from '../../ports/ports.js'

/** What to say after every handler failure: the mirror has stopped and what that means. */
const STOPPED = 'the mirror stopped and commits nothing from this record on; fix the handler (return null to drop a record) and restart'

/** A result the handler should not have returned; the message says what is wrong with it. */
class MalformedResult extends Error {}

function isThenable (value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
}

function kind (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return `an object (${(value as object).constructor?.name ?? 'no prototype'})`
  return `a ${typeof value}`
}

/** The source record's headers in wire order (the grouped form when the decoder gave no list). */
function headerListOf (record: KafkaRecord): RecordHeader[] {
  if (record.headerList !== undefined) return record.headerList.map(header => ({ key: header.key, value: header.value }))
  const list: RecordHeader[] = []
  for (const [key, value] of Object.entries(record.headers ?? {})) {
    for (const item of Array.isArray(value) ? value as ReadonlyArray<Buffer | string | null> : [value as Buffer | string | null | undefined]) {
      if (item === undefined) continue
      list.push({ key, value: typeof item === 'string' ? Buffer.from(item) : item })
    }
  }
  return list
}

function toHandlerRecord (topic: string, partition: number, record: KafkaRecord): HandlerRecord {
  return { topic, partition, offset: record.offset, timestamp: record.timestamp, key: record.key, value: record.value, headers: headerListOf(record) }
}

/** Bytes as the sink writes them; `what` names the field in the message. */
function bytesOf (value: unknown, what: string): Buffer | null {
  if (value === null) return null
  if (Buffer.isBuffer(value)) return value
  if (typeof value === 'string') return Buffer.from(value, 'utf8')
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  throw new MalformedResult(`${what} is ${kind(value)}; give a Buffer, a Uint8Array, a string or null`)
}

function headersOf (value: unknown): RecordHeader[] {
  if (Array.isArray(value)) {
    return value.map((header: unknown, index) => {
      const name = (header as { key?: unknown } | null)?.key
      if (header === null || typeof header !== 'object' || typeof name !== 'string') {
        throw new MalformedResult(`header ${index} is ${kind(header)}${typeof header === 'object' && header !== null ? ' without a string key' : ''}; give { key: 'name', value: Buffer | string | null }`)
      }
      return { key: name, value: bytesOf((header as { value?: unknown }).value ?? null, `header "${name}"`) }
    })
  }
  if (value !== null && typeof value === 'object') {
    const list: RecordHeader[] = []
    for (const [name, item] of Object.entries(value)) {
      for (const one of Array.isArray(item) ? item as unknown[] : [item]) list.push({ key: name, value: bytesOf(one ?? null, `header "${name}"`) })
    }
    return list
  }
  throw new MalformedResult(`headers is ${kind(value)}; give an array of { key, value } in order, or an object of name: value`)
}

function timestampOf (value: unknown): string {
  let ms: bigint | undefined
  if (typeof value === 'number' && Number.isSafeInteger(value)) ms = BigInt(value)
  else if (typeof value === 'bigint') ms = value
  else if (typeof value === 'string' && /^\d+$/.test(value.trim())) ms = BigInt(value.trim())
  else if (value instanceof Date && !Number.isNaN(value.getTime())) ms = BigInt(value.getTime())
  if (ms === undefined || ms < 0n) {
    throw new MalformedResult(
      `timestamp is ${typeof value === 'number' || typeof value === 'string' ? JSON.stringify(value) : kind(value)}; give milliseconds since the epoch (a non-negative integer number, bigint or decimal string, or a Date)`
    )
  }
  return ms.toString()
}

/** Grouped headers, as `KafkaRecord.headers` holds them (what tracing reads `traceparent` from). */
function grouped (list: readonly RecordHeader[]): Record<string, HeaderValue> {
  const out: Record<string, Array<Buffer | null>> = {}
  for (const { key, value } of list) (out[key] ??= []).push(value)
  const headers: Record<string, HeaderValue> = {}
  for (const [key, values] of Object.entries(out)) headers[key] = values.length === 1 ? values[0] as Buffer | null : values
  return headers
}

/**
 * One output of the handler as the record to write. It carries the offset of the source record it
 * came from: the pipeline commits and names source offsets, and the offset-sync writer reads a
 * repeated offset as a further output of the same source record.
 */
function toOutput (output: unknown, source: KafkaRecord, topic: string, partition: number, index: number | undefined): KafkaRecord {
  const at = index === undefined ? '' : `record ${index} of the result: `
  if (output === null || typeof output !== 'object' || Array.isArray(output)) {
    throw new MalformedResult(`${at}it is ${kind(output)}; give an object with key, value, headers and timestamp (fields left out keep the source record's)`)
  }
  const given = output as Record<string, unknown>
  try {
    if (given.topic !== undefined && given.topic !== topic) {
      throw new MalformedResult(
        `topic ${JSON.stringify(given.topic)} is not the source topic "${topic}"; a handler cannot send records to another topic (leave topic out)`
      )
    }
    if (given.partition !== undefined && given.partition !== partition) {
      throw new MalformedResult(
        `partition ${JSON.stringify(given.partition)} is not the source partition ${partition}; records stay in their source partition (leave partition out)`
      )
    }
    const headerList = given.headers === undefined ? source.headerList ?? headerListOf(source) : headersOf(given.headers)
    return {
      offset: source.offset,
      timestamp: given.timestamp === undefined ? source.timestamp : timestampOf(given.timestamp),
      key: given.key === undefined ? source.key : bytesOf(given.key, 'key'),
      value: given.value === undefined ? source.value : bytesOf(given.value, 'value'),
      headers: given.headers === undefined && source.headers !== undefined ? source.headers : grouped(headerList),
      headerList,
    }
  } catch (error) {
    if (error instanceof MalformedResult && at !== '') throw new MalformedResult(at + error.message)
    throw error
  }
}

function describeThrown (error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : `${kind(error)} ${JSON.stringify(error) ?? String(error)}`
}

/**
 * Applies a message handler (`--message.handler`) to fetched records: each source record, in
 * offset order, becomes the records the handler returns for it (none, one, several), each
 * carrying the source record's offset, in the source partition. A throwing handler or a malformed
 * result is a non-retriable `MIRROR_MESSAGE_HANDLER` error naming the record (topic, partition,
 * offset); nothing of that fetch is handed on, so nothing from that record on can be committed.
 */
export class MessageHandler {
  readonly #handle: MessageHandlerFunction
  readonly #module: string
  readonly #context: HandlerContext

  constructor (handle: MessageHandlerFunction, options: { readonly module: string, readonly args: string | undefined, readonly flow: string }) {
    this.#handle = handle
    this.#module = options.module
    this.#context = Object.freeze({ args: options.args, flow: options.flow })
  }

  /**
   * The records to write in place of `fetched.records`; `nextOffset` is past the last fetched
   * record even when the handler dropped it, so a commit after them may move past dropped records.
   */
  async apply (fetched: FetchedBatch): Promise<FetchedBatch> {
    const { topic, partition } = fetched
    const records: KafkaRecord[] = []
    for (const source of fetched.records) {
      let result: unknown
      try {
        result = this.#handle(toHandlerRecord(topic, partition, source), this.#context)
        if (isThenable(result)) result = await result
      } catch (error) {
        throw this.#failure(`threw on ${topic} partition ${partition} offset ${source.offset}: ${describeThrown(error)}`, error)
      }
      try {
        if (result === undefined) {
          throw new MalformedResult('it returned undefined; return the record (changed or not), an array of records, or null or [] to drop it')
        }
        if (Array.isArray(result)) {
          for (const [index, output] of result.entries()) records.push(toOutput(output, source, topic, partition, index))
        } else if (result !== null) {
          records.push(toOutput(result, source, topic, partition, undefined))
        }
      } catch (error) {
        if (!(error instanceof MalformedResult)) throw error
        throw this.#failure(`returned a malformed result for ${topic} partition ${partition} offset ${source.offset}: ${error.message}`, undefined)
      }
    }
    const last = fetched.records.at(-1)
    const afterLast = last === undefined ? undefined : BigInt(last.offset) + 1n
    const nextOffset = fetched.nextOffset !== undefined && (afterLast === undefined || fetched.nextOffset > afterLast) ? fetched.nextOffset : afterLast
    return { ...fetched, records, ...(nextOffset === undefined ? {} : { nextOffset }) }
  }

  #failure (what: string, cause: unknown): MirrorError {
    return new MirrorError(ErrorCodes.MESSAGE_HANDLER, `message handler ${this.#module} ${what}; ${STOPPED}`, cause === undefined ? {} : { cause })
  }
}
