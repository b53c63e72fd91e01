import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { MirrorTracer, TraceAttributes as A } from '../../../../src/sidecar/tracing/mirror-tracer.js'
import { tracingEnabled } from '../../../../src/sidecar/tracing/tracing-enabled.js'
import { semconvEmission } from '../../../../src/sidecar/tracing/semantic-conventions.js'
import { MirrorError, ErrorCodes } from '../../../../src/shared/errors.js'
import { startOtlpReceiver, type OtlpKeyValue, type OtlpReceiver } from '../../../helpers/otlp-receiver.js'

/** The shared OTLP/HTTP JSON receiver, with the base endpoint the SDK appends `/v1/traces` to. */
async function startReceiver (t: TestContext): Promise<OtlpReceiver & { endpoint: string }> {
  const receiver = await startOtlpReceiver(t)
  return { ...receiver, endpoint: receiver.tracesEndpoint.replace(/\/v1\/traces$/, '') }
}

function attributes (keyValues: readonly OtlpKeyValue[] = []): Record<string, string | number | boolean | undefined> {
  return Object.fromEntries(
    keyValues.map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue,
    ])
  )
}

const UPSTREAM_A = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
const UPSTREAM_B = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

test('tracing is decided by the standard OTEL_* variables only', () => {
  assert.equal(tracingEnabled({}), false)
  assert.equal(tracingEnabled({ OTEL_TRACES_EXPORTER: 'none' }), false)
  assert.equal(tracingEnabled({ OTEL_TRACES_EXPORTER: 'otlp' }), true)
  assert.equal(tracingEnabled({ OTEL_TRACES_EXPORTER: 'console' }), true)
  assert.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true)
  assert.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true)
  assert.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }), false)
  assert.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }), false)
})

test('off: handles are shared no-ops and nothing is sent', async () => {
  const tracer = new MirrorTracer({ env: {} })
  await tracer.start()
  assert.equal(tracer.enabled, false)
  const first = tracer.startBatchSpan({
    flow: 'f',
    sourceAlias: 's',
    targetAlias: 't',
    topic: 'x',
    partition: 0,
    firstOffset: 0n,
    lastOffset: 0n,
    count: 1,
    traceparents: [UPSTREAM_A],
  })
  const second = tracer.startBatchSpan({
    flow: 'f',
    sourceAlias: 's',
    targetAlias: 't',
    topic: 'y',
    partition: 1,
    firstOffset: 1n,
    lastOffset: 1n,
    count: 1,
    traceparents: [],
  })
  assert.equal(first, second, 'one shared no-op object, no allocation per batch')
  assert.equal(first.sendSpan(), second.sendSpan())
  first.end(new Error('ignored'))
  await tracer.stop()
})

test('batch spans reach an OTLP/HTTP receiver with messaging attributes, upstream links, retries and errors', { timeout: 30_000 }, async t => {
  const receiver = await startReceiver(t)
  Object.assign(process.env, {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_SERVICE_NAME: 'mirror-under-test',
  })
  const tracer = new MirrorTracer()
  t.after(() => tracer.stop())
  await tracer.start()
  assert.equal(tracer.enabled, true)

  const batch = tracer.startBatchSpan({
    flow: 'eu->us',
    sourceAlias: 'eu',
    targetAlias: 'us',
    topic: 'orders',
    targetTopic: 'eu.orders',
    partition: 3,
    firstOffset: 120n,
    lastOffset: 123n,
    count: 4,
    consumerGroup: 'mirror-eu-us',
    traceparents: [UPSTREAM_A, undefined, 'not-a-traceparent', UPSTREAM_B, UPSTREAM_A],
  })
  const send = batch.sendSpan()
  send.retry({ operation: 'produce', errorCode: 'NOT_LEADER_OR_FOLLOWER', attempt: 1, backoffMs: 100 })
  send.setTargetOffset(9_000n)
  send.end()
  batch.end()

  const failed = tracer.startBatchSpan({
    flow: 'eu->us',
    sourceAlias: 'eu',
    targetAlias: 'us',
    topic: 'orders',
    partition: 0,
    firstOffset: 7n,
    lastOffset: 7n,
    count: 1,
    traceparents: [undefined],
  })
  failed.retry({ operation: 'produce', errorCode: 'REQUEST_TIMED_OUT' })
  failed.end(new MirrorError(ErrorCodes.SEND_FAILED, 'record too large', { kafkaCode: 'MESSAGE_TOO_LARGE' }))
  failed.end()

  await tracer.stop()
  assert.equal(tracer.enabled, false)

  assert.equal(receiver.spans.length, 3, `spans: ${receiver.spans.map(span => span.name).join(', ')}`)
  assert.equal(attributes(receiver.resources[0])['service.name'], 'mirror-under-test')
  const processed = receiver.spans.find(span => span.name === 'process orders' && attributes(span.attributes)[A.MESSAGING_DESTINATION_PARTITION_ID] === '3')
  const sent = receiver.spans.find(span => span.name === 'send eu.orders')
  const error = receiver.spans.find(span => span.name === 'process orders' && attributes(span.attributes)[A.MESSAGING_DESTINATION_PARTITION_ID] === '0')
  assert.ok(processed !== undefined && sent !== undefined && error !== undefined)

  assert.equal(processed.kind, 5, 'SPAN_KIND_CONSUMER')
  assert.deepEqual(attributes(processed.attributes), {
    'messaging.system.name': 'kafka',
    'messaging.operation.type': 'process',
    'messaging.operation.name': 'process',
    'messaging.destination.name': 'orders',
    'messaging.destination.partition.id': '3',
    'messaging.batch.message_count': 4,
    'kafka.offset': 120,
    'messaging.consumer.group.name': 'mirror-eu-us',
    'kafka_mirror.last_offset': 123,
    'kafka_mirror.flow': 'eu->us',
    'kafka_mirror.source': 'eu',
    'kafka_mirror.target': 'us',
  })
  assert.deepEqual(
    (processed.links ?? []).map(link => `00-${link.traceId}-${link.spanId}-01`).sort(),
    [UPSTREAM_A, UPSTREAM_B].sort(),
    'one link per distinct valid upstream traceparent'
  )
  assert.notEqual(processed.traceId, '0af7651916cd43dd8448eb211c80319c', 'a batch span is a new trace, linked not parented')

  assert.equal(sent.kind, 4, 'SPAN_KIND_PRODUCER')
  assert.equal(sent.traceId, processed.traceId)
  assert.equal(sent.parentSpanId, processed.spanId)
  const sentAttributes = attributes(sent.attributes)
  assert.equal(sentAttributes['messaging.operation.type'], 'send')
  assert.equal(sentAttributes['messaging.destination.name'], 'eu.orders')
  assert.equal(sentAttributes['messaging.destination.partition.id'], '3')
  assert.equal(sentAttributes['kafka.offset'], 9000)
  assert.equal(sentAttributes['kafka_mirror.source.topic'], 'orders')
  assert.deepEqual(
    sent.events?.map(event => [event.name, attributes(event.attributes)]),
    [
      [
        'retry',
        {
          'kafka_mirror.retry.operation': 'produce',
          'kafka_mirror.retry.error_code': 'NOT_LEADER_OR_FOLLOWER',
          'kafka_mirror.retry.attempt': 1,
          'kafka_mirror.retry.backoff_ms': 100,
        },
      ],
    ]
  )

  assert.equal(error.status?.code, 2, 'STATUS_CODE_ERROR')
  assert.equal(error.status?.message, 'record too large')
  assert.equal(attributes(error.attributes)['error.type'], 'MESSAGE_TOO_LARGE')
  assert.deepEqual(error.events?.map(event => event.name), ['retry', 'exception'])
  assert.deepEqual(error.links ?? [], [], 'no upstream context, no links')
})

test('OTEL_SEMCONV_STABILITY_OPT_IN: messaging/dup adds the 1.44 names, anything else emits the 1.45 names only', () => {
  assert.equal(semconvEmission({}), 'current')
  assert.equal(semconvEmission({ OTEL_SEMCONV_STABILITY_OPT_IN: 'messaging' }), 'current')
  assert.equal(semconvEmission({ OTEL_SEMCONV_STABILITY_OPT_IN: 'http,database' }), 'current')
  assert.equal(semconvEmission({ OTEL_SEMCONV_STABILITY_OPT_IN: 'http, messaging/dup' }), 'duplicate')
  assert.equal(semconvEmission({ OTEL_SEMCONV_STABILITY_OPT_IN: 'messaging,messaging/dup' }), 'duplicate', 'messaging/dup wins over messaging')
})

test('with messaging/dup every renamed attribute carries its 1.45 and its 1.44 name, on spans and retry events', { timeout: 30_000 }, async t => {
  const receiver = await startReceiver(t)
  Object.assign(process.env, {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  })
  const tracer = new MirrorTracer({ env: { ...process.env, OTEL_SEMCONV_STABILITY_OPT_IN: 'messaging/dup' } })
  t.after(() => tracer.stop())
  await tracer.start()
  const batch = tracer.startBatchSpan({
    flow: 'eu->us',
    sourceAlias: 'eu',
    targetAlias: 'us',
    topic: 'orders',
    partition: 1,
    firstOffset: 5n,
    lastOffset: 6n,
    count: 2,
    traceparents: [],
  })
  const send = batch.sendSpan()
  send.retry({ operation: 'produce', errorCode: 'NOT_LEADER_OR_FOLLOWER' })
  send.setTargetOffset(50n)
  send.end()
  batch.end()
  await tracer.stop()

  const processed = receiver.spans.find(span => span.name === 'process orders')
  const sent = receiver.spans.find(span => span.name === 'send orders')
  assert.ok(processed !== undefined && sent !== undefined, `spans: ${receiver.spans.map(span => span.name).join(', ')}`)
  assert.deepEqual(attributes(processed.attributes), {
    'messaging.system.name': 'kafka',
    'messaging.system': 'kafka',
    'messaging.operation.type': 'process',
    'messaging.operation.name': 'process',
    'messaging.destination.name': 'orders',
    'messaging.destination.partition.id': '1',
    'messaging.batch.message_count': 2,
    'kafka.offset': 5,
    'messaging.kafka.offset': 5,
    'kafka_mirror.last_offset': 6,
    'kafka.mirror.last_offset': 6,
    'kafka_mirror.flow': 'eu->us',
    'kafka.mirror.flow': 'eu->us',
    'kafka_mirror.source': 'eu',
    'kafka.mirror.source': 'eu',
    'kafka_mirror.target': 'us',
    'kafka.mirror.target': 'us',
  })
  const sentAttributes = attributes(sent.attributes)
  assert.equal(sentAttributes['kafka.offset'], 50)
  assert.equal(sentAttributes['messaging.kafka.offset'], 50)
  assert.equal(sentAttributes['kafka_mirror.source.topic'], 'orders')
  assert.equal(sentAttributes['kafka.mirror.source.topic'], 'orders')
  assert.deepEqual(sent.events?.map(event => attributes(event.attributes)), [{
    'kafka_mirror.retry.operation': 'produce',
    'kafka_mirror.retry.error_code': 'NOT_LEADER_OR_FOLLOWER',
    'kafka.mirror.retry.operation': 'produce',
    'kafka.mirror.retry.error_code': 'NOT_LEADER_OR_FOLLOWER',
  }])
})
