import type { HeaderValue } from '../shared/kafka-record.js'
import { recordCount, sourceOffsetAt, type MirrorBatch } from './mirror-batch.js'
import type { FlowLabels } from './pipeline-observer.js'

/** One batch of records from one source partition, as the pipeline hands it to the producer. */
export interface BatchSpanInput {
  readonly flow: string
  readonly sourceAlias: string
  readonly targetAlias: string
  /** Source topic. */
  readonly topic: string
  /** Target topic; default: the source topic. */
  readonly targetTopic?: string
  readonly partition: number
  readonly firstOffset: bigint
  readonly lastOffset: bigint
  readonly count: number
  /** Each record's W3C `traceparent` header (undefined when absent); each valid one becomes a span link. */
  readonly traceparents: readonly (string | undefined)[]
  /** The mirror's consumer group on the source. */
  readonly consumerGroup?: string
}

const TRACEPARENT = 'traceparent'

/** The W3C `traceparent` header of a record as a string (the first value if repeated); undefined when absent. */
export function traceparentOf (headers: Readonly<Record<string, HeaderValue>> | undefined): string | undefined {
  const value = headers?.[TRACEPARENT]
  if (value == null) return undefined
  const first = typeof value === 'string' || Buffer.isBuffer(value) ? value : value[0]
  return first == null ? undefined : typeof first === 'string' ? first : first.toString('latin1')
}

/**
 * What `MirrorTracer.startBatchSpan` needs for one `MirrorBatch`. Reads the headers only when
 * `withLinks` (pass `tracer.enabled`), so a mirror without tracing does not walk them.
 */
export function batchSpanInput (flow: FlowLabels, batch: MirrorBatch, withLinks: boolean, consumerGroup?: string): BatchSpanInput {
  const records = batch.records
  const traceparents: Array<string | undefined> = []
  if (withLinks) for (const record of records) traceparents.push(traceparentOf(record.headers))
  const count = recordCount(batch)
  return {
    flow: flow.flow,
    sourceAlias: flow.source,
    targetAlias: flow.target,
    topic: batch.sourceTopic,
    targetTopic: batch.targetTopic,
    partition: batch.partition,
    firstOffset: batch.firstOffset,
    lastOffset: count === 0 ? batch.firstOffset : sourceOffsetAt(batch, count - 1),
    count,
    traceparents,
    ...(consumerGroup === undefined ? {} : { consumerGroup }),
  }
}
