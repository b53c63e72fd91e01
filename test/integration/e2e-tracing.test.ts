import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import { createTopic, deleteTopicIfExists, produce, readAll, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { otlpAttributes, startOtlpReceiver, type OtlpSpan } from '../helpers/otlp-receiver.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const PARTITIONS = 2
const RECORDS = 40

/** Upstream context of record i: a distinct trace and span id per record. */
function traceparent (i: number): string {
  return `00-${(i + 1).toString(16).padStart(32, 'c')}-${(i + 1).toString(16).padStart(16, 'd')}-01`
}

/** Even records carry a traceparent (as bytes, plus a binary header); odd ones carry none. */
function messages (): Message[] {
  return Array.from({ length: RECORDS }, (_, i) => ({
    partition: i % PARTITIONS,
    key: `k${i}`,
    value: `v${i}`,
    headers: i % 2 === 0 ? { traceparent: Buffer.from(traceparent(i), 'latin1'), raw: Buffer.from([0, 255, i]) } : { other: `o${i}` },
  }))
}

/** OTEL_* variables removed from the child's environment (the test runner's own must not leak in). */
function withoutOtel (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const cleared = Object.fromEntries(Object.keys(process.env).filter(key => key.startsWith('OTEL_')).map(key => [key, undefined]))
  return { ...cleared, ...extra }
}

test(
  'the binary exports process/send spans over OTLP/HTTP JSON, linked to each upstream traceparent, which arrives unchanged',
  { timeout: 90_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: PARTITIONS })
    t.after(() => deleteTopicIfExists(target, topic))
    const receiver = await startOtlpReceiver(t)
    const groupId = uniqueName('e2e-trace')
    await produce(source, topic, messages())

    const sidecar = spawnSidecar(t, {
      source,
      target,
      groupId,
      include: topic,
      env: withoutOtel({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesEndpoint,
        OTEL_BSP_SCHEDULE_DELAY: '200',
      }),
    })
    await waitMirroring(sidecar)
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === BigInt(RECORDS), { timeoutMs: 30_000, message: 'records copied' })
    const processSpans = (): OtlpSpan[] => receiver.spans.filter(span => span.name === `process ${topic}`)
    const counted = (spans: OtlpSpan[]): number =>
      spans.reduce((sum, span) => sum + Number(otlpAttributes(span.attributes)['messaging.batch.message_count']), 0)
    await waitUntil(
      () => counted(processSpans()) === RECORDS && receiver.spans.filter(span => span.name === `send ${topic}`).length === processSpans().length,
      { timeoutMs: 20_000, message: `process and send spans covering ${RECORDS} records (have: ${receiver.spans.map(s => s.name).join(', ')})` }
    )

    assert.equal(otlpAttributes(receiver.resources[0])['service.name'], 'kafka-mirror-sidecar')
    const processed = processSpans()
    const offsetsSeen = new Map<string, number[]>()
    for (const span of processed) {
      const a = otlpAttributes(span.attributes)
      assert.equal(span.kind, 5, 'SPAN_KIND_CONSUMER')
      assert.equal(span.parentSpanId ?? '', '', 'a batch span has no parent (it links)')
      assert.equal(a['messaging.system.name'], 'kafka')
      assert.equal(a['messaging.operation.type'], 'process')
      assert.equal(a['messaging.destination.name'], topic)
      assert.match(String(a['messaging.destination.partition.id']), /^[01]$/)
      assert.equal(typeof a['messaging.destination.partition.id'], 'string')
      assert.equal(a['messaging.consumer.group.name'], groupId)
      assert.equal(a['kafka_mirror.source'], 'source')
      assert.equal(a['kafka_mirror.target'], 'target')
      assert.equal(a['kafka_mirror.flow'], 'source->target')
      const first = Number(a['kafka.offset'])
      const last = Number(a['kafka_mirror.last_offset'])
      assert.equal(last - first + 1, a['messaging.batch.message_count'], 'offsets span the batch')
      const partition = String(a['messaging.destination.partition.id'])
      offsetsSeen.set(partition, [...(offsetsSeen.get(partition) ?? []), ...Array.from({ length: last - first + 1 }, (_, k) => first + k)])

      // Record i is at offset i / 2 of partition i % 2; even i carry a traceparent.
      const expectedLinks = []
      for (let offset = first; offset <= last; offset++) {
        const i = offset * PARTITIONS + Number(partition)
        if (i % 2 === 0) expectedLinks.push(traceparent(i))
      }
      assert.deepEqual(
        (span.links ?? []).map(link => `00-${link.traceId}-${link.spanId}-01`).sort(),
        expectedLinks.sort(),
        `links of ${span.name} p${partition} ${first}..${last}`
      )

      const sends = receiver.spans.filter(s => s.parentSpanId === span.spanId)
      assert.equal(sends.length, 1, 'one send span per batch span')
      const send = sends[0] as OtlpSpan
      const s = otlpAttributes(send.attributes)
      assert.equal(send.name, `send ${topic}`)
      assert.equal(send.kind, 4, 'SPAN_KIND_PRODUCER')
      assert.equal(send.traceId, span.traceId)
      assert.equal(s['messaging.system.name'], 'kafka')
      assert.equal(s['messaging.operation.type'], 'send')
      assert.equal(s['messaging.destination.name'], topic)
      assert.equal(s['messaging.destination.partition.id'], partition)
      assert.equal(s['messaging.batch.message_count'], a['messaging.batch.message_count'])
      assert.equal(s['kafka.offset'], first, 'a fresh target: the target base offset equals the source offset')
      assert.equal(s['kafka_mirror.source'], 'source')
      assert.equal(s['kafka_mirror.target'], 'target')
    }
    const half = Array.from({ length: RECORDS / PARTITIONS }, (_, k) => k)
    assert.deepEqual(
      [...offsetsSeen.entries()].sort().map(([p, offsets]) => [p, offsets.sort((x, y) => x - y)]),
      [
        ['0', half],
        ['1', half],
      ],
      'every record in exactly one batch span'
    )

    const copied = await readAll(target, topic)
    assert.equal(copied.length, RECORDS)
    for (const record of copied) {
      const i = Number(String(record.key).slice(1))
      if (i % 2 === 0) {
        assert.deepEqual(record.headers.traceparent, Buffer.from(traceparent(i), 'latin1'), `k${i}: traceparent byte for byte`)
        assert.deepEqual(record.headers.raw, Buffer.from([0, 255, i]))
      } else {
        assert.equal(record.headers.traceparent, undefined, `k${i}: no traceparent is added`)
        assert.deepEqual(Object.keys(record.headers), ['other'])
      }
    }

    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
    assert.match(sidecar.stderr(), /"msg":"tracing on"/)
    assert.doesNotMatch(sidecar.stderr(), /"level":"(warn|error)"/, 'no warnings or errors')
  }
)

test('without OTEL_* variables (or with OTEL_TRACES_EXPORTER=none) the binary sends no spans and logs no exporter errors', { timeout: 90_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: PARTITIONS })
  t.after(() => deleteTopicIfExists(target, topic))
  const receiver = await startOtlpReceiver(t)
  await produce(source, topic, messages())

  // The second run names a live endpoint but turns the exporter off: nothing may reach it either.
  const runs: Array<[string, NodeJS.ProcessEnv]> = [
    ['no OTEL_* variables', withoutOtel()],
    [
      'OTEL_TRACES_EXPORTER=none',
      withoutOtel({
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesEndpoint,
        OTEL_BSP_SCHEDULE_DELAY: '200',
      }),
    ],
  ]
  let expected = RECORDS
  for (const [name, env] of runs) {
    const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('e2e-notrace'), include: topic, env })
    await waitMirroring(sidecar)
    // A fresh group copies the topic again from the start: the second run doubles the target.
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === BigInt(expected), {
      timeoutMs: 30_000,
      message: `${name}: records copied`,
    })
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, `${name}: ${sidecar.stderr().slice(-2000)}`)
    assert.doesNotMatch(sidecar.stderr(), /"msg":"tracing on"/, name)
    assert.doesNotMatch(sidecar.stderr(), /otlp|opentelemetry|export/i, `${name}: nothing about an exporter in the log`)
    assert.doesNotMatch(sidecar.stderr(), /"level":"(warn|error)"/, `${name}: no warnings or errors`)
    expected += RECORDS
  }
  assert.deepEqual(receiver.requests, [], 'the receiver got no request at all')
  const copied = await readAll(target, topic)
  assert.equal(copied.filter(record => record.headers.traceparent !== undefined).length, RECORDS, 'the traceparent headers are still copied (once per run)')
})
