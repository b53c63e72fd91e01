import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  propagation,
  type Attributes,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api'
import { MirrorError } from '../../shared/errors.js'
import { silentLogger, type Logger } from '../../shared/logger.js'
import { packageVersion } from '../../shared/package-version.js'
import { redactUrl } from '../../shared/redact-url.js'
import { serviceNameConfigured, tracingEnabled } from './tracing-enabled.js'
import type { BatchSpanInput } from '../../ports/batch-span-input.js'
import { conventionAttributes, semconvEmission, TraceAttributes, type SemconvEmission } from './semantic-conventions.js'

export { TraceAttributes } from './semantic-conventions.js'

const A = TraceAttributes
const SERVICE_NAME = 'kafka-mirror-sidecar'
const TRACER_NAME = 'kafka-mirror-sidecar'

/** A retried operation, recorded as a span event. */
export interface RetryEvent {
  readonly operation: string
  readonly errorCode: string
  readonly attempt?: number
  readonly backoffMs?: number
}

/** The span of one produce to the target (child of the batch span). */
export interface SendSpanHandle {
  retry: (event: RetryEvent) => void
  /** Records the target offset the batch's first record got. */
  setTargetOffset: (baseOffset: bigint) => void
  /** Ends the span; an error sets status ERROR with the error recorded. Only the first call counts. */
  end: (error?: unknown) => void
}

/** The span of one batch through the mirror (`process <topic>`), linked to each record's upstream context. */
export interface BatchSpanHandle {
  /** Starts the `send <target topic>` child span. */
  sendSpan: () => SendSpanHandle
  retry: (event: RetryEvent) => void
  /** Ends the span; an error sets status ERROR with the error recorded. Only the first call counts. */
  end: (error?: unknown) => void
}

// Tracing off: handles that record nothing.
const NOOP_SEND: SendSpanHandle = {
  retry () { /* tracing off */ },
  setTargetOffset () { /* tracing off */ },
  end () { /* tracing off */ },
}
const NOOP_BATCH: BatchSpanHandle = {
  sendSpan: () => NOOP_SEND,
  retry () { /* tracing off */ },
  end () { /* tracing off */ },
}

export interface MirrorTracerOptions {
  /**
   * Where the OTEL_* variables are read to decide on/off and which attribute names to emit; default
   * `process.env` (the SDK itself always reads `process.env`).
   */
  readonly env?: NodeJS.ProcessEnv
  /** Most links per batch span; default `OTEL_SPAN_LINK_COUNT_LIMIT` or 128 (the SDK's limit: more would be dropped anyway). */
  readonly maxLinksPerSpan?: number
  readonly logger?: Logger
}

type ParseTraceParent = (traceparent: string) => SpanContext | null
interface Sdk { start: () => void, shutdown: () => Promise<void> }

/**
 * Traces batches through the mirror with the OpenTelemetry Node SDK, configured only by the
 * standard OTEL_* variables (see `tracingEnabled`). Off by default: then `startBatchSpan` returns
 * a shared no-op handle and the SDK is never loaded. When on, the SDK's own metrics and logs
 * export are off (metrics are prom-client's job). `stop()` flushes pending spans, once.
 * Attribute names follow messaging semantic conventions 1.45 (`semantic-conventions.ts`);
 * `OTEL_SEMCONV_STABILITY_OPT_IN=messaging/dup` adds the 1.44 names beside them.
 * The mirror copies each record's `traceparent` header unchanged; this class only reads it.
 */
export class MirrorTracer {
  readonly #env: NodeJS.ProcessEnv
  readonly #logger: Logger
  readonly #maxLinks: number
  readonly #emission: SemconvEmission
  #sdk: Sdk | undefined
  #tracer: Tracer | undefined
  #parseTraceParent: ParseTraceParent | undefined
  #stopped: Promise<void> | undefined

  constructor (options: MirrorTracerOptions = {}) {
    this.#env = options.env ?? process.env
    this.#logger = options.logger ?? silentLogger
    this.#maxLinks = options.maxLinksPerSpan ?? (Number(this.#env.OTEL_SPAN_LINK_COUNT_LIMIT) || 128)
    this.#emission = semconvEmission(this.#env)
  }

  /** True once started with tracing configured; the pipeline may skip collecting traceparents otherwise. */
  get enabled (): boolean { return this.#tracer !== undefined }

  async start (): Promise<void> {
    if (this.#sdk !== undefined || this.#stopped !== undefined || !tracingEnabled(this.#env)) return
    const { NodeSDK, core } = await import('@opentelemetry/sdk-node')
    const sdk = new NodeSDK({
      ...(serviceNameConfigured(this.#env) ? {} : { serviceName: SERVICE_NAME }),
      metricReaders: [],
      logRecordProcessors: [],
      instrumentations: [],
    })
    sdk.start()
    this.#sdk = sdk
    this.#parseTraceParent = core.parseTraceParent
    this.#tracer = trace.getTracer(TRACER_NAME, packageVersion())
    const endpoint = this.#env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? this.#env.OTEL_EXPORTER_OTLP_ENDPOINT
    this.#logger.info('tracing on', {
      exporter: this.#env.OTEL_TRACES_EXPORTER ?? 'otlp',
      endpoint: endpoint === undefined ? undefined : redactUrl(endpoint),
      semconv: this.#emission === 'duplicate' ? 'messaging 1.45 and 1.44' : 'messaging 1.45',
    })
  }

  /** Flushes and shuts the SDK down, then unregisters its globals. Safe to call twice. */
  async stop (): Promise<void> {
    this.#stopped ??= this.#shutdown()
    await this.#stopped
  }

  /** Starts the span of one batch; a no-op handle when tracing is off. */
  startBatchSpan (input: BatchSpanInput): BatchSpanHandle {
    const tracer = this.#tracer
    if (tracer === undefined) return NOOP_BATCH
    const { links, dropped } = this.#links(input.traceparents)
    const attributes: Attributes = {
      [A.MESSAGING_SYSTEM_NAME]: 'kafka',
      [A.MESSAGING_OPERATION_TYPE]: 'process',
      [A.MESSAGING_OPERATION_NAME]: 'process',
      [A.MESSAGING_DESTINATION_NAME]: input.topic,
      [A.MESSAGING_DESTINATION_PARTITION_ID]: String(input.partition),
      [A.MESSAGING_BATCH_MESSAGE_COUNT]: input.count,
      [A.KAFKA_OFFSET]: Number(input.firstOffset),
      [A.MIRROR_LAST_OFFSET]: Number(input.lastOffset),
      [A.MIRROR_FLOW]: input.flow,
      [A.MIRROR_SOURCE]: input.sourceAlias,
      [A.MIRROR_TARGET]: input.targetAlias,
    }
    if (input.consumerGroup !== undefined) attributes[A.MESSAGING_CONSUMER_GROUP_NAME] = input.consumerGroup
    if (dropped > 0) attributes[A.MIRROR_LINKS_DROPPED] = dropped
    const span = tracer.startSpan(
      `process ${input.topic}`,
      { kind: SpanKind.CONSUMER, attributes: conventionAttributes(attributes, this.#emission), links },
      ROOT_CONTEXT
    )
    return new BatchSpan(tracer, span, input, this.#emission)
  }

  /** One link per distinct valid upstream context, up to the limit. */
  #links (traceparents: readonly (string | undefined)[]): { links: Link[], dropped: number } {
    const parse = this.#parseTraceParent as ParseTraceParent
    const links: Link[] = []
    const seen = new Set<string>()
    let dropped = 0
    for (const traceparent of traceparents) {
      if (traceparent === undefined || seen.has(traceparent)) continue
      seen.add(traceparent)
      const spanContext = parse(traceparent)
      if (spanContext === null) continue
      if (links.length >= this.#maxLinks) dropped++
      else links.push({ context: { ...spanContext, isRemote: true } })
    }
    return { links, dropped }
  }

  async #shutdown (): Promise<void> {
    const sdk = this.#sdk
    this.#tracer = undefined
    this.#sdk = undefined
    if (sdk === undefined) return
    try {
      await sdk.shutdown()
    } finally {
      trace.disable()
      propagation.disable()
      context.disable()
    }
  }
}

class BatchSpan implements BatchSpanHandle {
  #ended = false

  constructor (readonly tracer: Tracer, readonly span: Span, readonly input: BatchSpanInput, readonly emission: SemconvEmission) {}

  sendSpan (): SendSpanHandle {
    const targetTopic = this.input.targetTopic ?? this.input.topic
    const span = this.tracer.startSpan(`send ${targetTopic}`, {
      kind: SpanKind.PRODUCER,
      attributes: conventionAttributes({
        [A.MESSAGING_SYSTEM_NAME]: 'kafka',
        [A.MESSAGING_OPERATION_TYPE]: 'send',
        [A.MESSAGING_OPERATION_NAME]: 'send',
        [A.MESSAGING_DESTINATION_NAME]: targetTopic,
        [A.MESSAGING_DESTINATION_PARTITION_ID]: String(this.input.partition),
        [A.MESSAGING_BATCH_MESSAGE_COUNT]: this.input.count,
        [A.MIRROR_SOURCE_TOPIC]: this.input.topic,
        [A.MIRROR_FLOW]: this.input.flow,
        [A.MIRROR_SOURCE]: this.input.sourceAlias,
        [A.MIRROR_TARGET]: this.input.targetAlias,
      }, this.emission),
    }, trace.setSpan(ROOT_CONTEXT, this.span))
    return new SendSpan(span, this.emission)
  }

  retry (event: RetryEvent): void { addRetryEvent(this.span, event, this.emission) }

  end (error?: unknown): void {
    if (this.#ended) return
    this.#ended = true
    endSpan(this.span, error)
  }
}

class SendSpan implements SendSpanHandle {
  #ended = false

  constructor (readonly span: Span, readonly emission: SemconvEmission) {}

  retry (event: RetryEvent): void { addRetryEvent(this.span, event, this.emission) }

  setTargetOffset (baseOffset: bigint): void {
    this.span.setAttributes(conventionAttributes({ [A.KAFKA_OFFSET]: Number(baseOffset) }, this.emission))
  }

  end (error?: unknown): void {
    if (this.#ended) return
    this.#ended = true
    endSpan(this.span, error)
  }
}

function addRetryEvent (span: Span, event: RetryEvent, emission: SemconvEmission): void {
  const attributes: Attributes = { [A.RETRY_OPERATION]: event.operation, [A.RETRY_ERROR_CODE]: event.errorCode }
  if (event.attempt !== undefined) attributes[A.RETRY_ATTEMPT] = event.attempt
  if (event.backoffMs !== undefined) attributes[A.RETRY_BACKOFF_MS] = event.backoffMs
  span.addEvent('retry', conventionAttributes(attributes, emission))
}

function endSpan (span: Span, error: unknown): void {
  if (error !== undefined) {
    const exception = error instanceof Error ? error : new Error(String(error))
    span.recordException(exception)
    span.setAttribute(A.ERROR_TYPE, error instanceof MirrorError ? (error.kafkaCode ?? error.code) : exception.name)
    span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message })
  }
  span.end()
}
