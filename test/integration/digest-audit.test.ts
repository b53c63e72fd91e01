import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import { grafanaDir } from '../../grafana/src/build.js'
import { configFromMm1 } from '../../src/config/mm1-args.js'
import { MirrorSidecar } from '../../src/sidecar/mirror-sidecar.js'
import { createLogger } from '../../src/shared/logger.js'
import { committedOffsets, createTopic, deleteTopicIfExists, produce, readAll, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { startPrometheus } from '../helpers/prometheus.js'
import { writeProperties } from '../helpers/sidecar.js'
import { sampleSum } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const RECORDS = 3_000
const AUDIT_INTERVAL_MS = 1_000

test(
  "the continuous audit finds a record changed on the target behind the mirror's back: a metric, an error line naming topic, partition and offsets, and the alert fires in Prometheus",
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('digest-audit'), partitions: 1 })
    t.after(() => deleteTopicIfExists(target, topic))
    const now = Date.now()
    await produce(
      source,
      topic,
      Array.from({ length: RECORDS }, (_, i): Message => ({
        partition: 0,
        key: `k${i}`,
        value: `v${i}`,
        timestamp: String(now + i),
        headers: { n: String(i) },
      }))
    )

    const group = uniqueName('mirror')
    const config = configFromMm1({
      'consumer.config': [writeProperties({ 'bootstrap.servers': source.bootstrap, 'group.id': group, 'auto.offset.reset': 'earliest' }, 'source.properties')],
      'producer.config': writeProperties({ 'bootstrap.servers': target.bootstrap }, 'target.properties'),
      whitelist: topic,
      'offset.commit.interval.ms': '200',
      'refresh.topics.interval.ms': '600000',
      'metrics.port': '0',
      'metrics.host': '127.0.0.1',
      // The deep path (records decoded): the pass-through path is digested in mirror-check-verify-digests.test.ts.
      'pass.through': 'off',
      'digests.enabled': 'true',
      'digests.range.records': '1000',
      'digests.audit.interval.ms': String(AUDIT_INTERVAL_MS),
      'digests.audit.max.records': '10000',
    })
    const errorLines: string[] = []
    const logger = createLogger({
      level: 'warn',
      write: line => {
        if (line.includes('"level":"error"')) errorLines.push(line)
      },
    })
    // The loss monitor would see the target topic gone while it is rewritten (and stop the flow): here only the audit may find it.
    const sidecar = new MirrorSidecar(config, { logger, lossCheckIntervalMs: 3_600_000 })
    t.after(() => sidecar.stop())
    await sidecar.start()
    const prometheus = await startPrometheus(t, {
      targets: [`127.0.0.1:${sidecar.observability.port}`],
      scrapeIntervalSeconds: 1,
      ruleFiles: [join(grafanaDir(), 'alerts.yml')],
    })
    const metric = async (name: string): Promise<number | undefined> => sampleSum(await sidecar.observability.metrics.registry.metrics(), name)

    await waitUntil(async () => (await committedOffsets(source, group, topic)).get(0) === BigInt(RECORDS), {
      timeoutMs: 60_000,
      message: 'the mirror to commit every record',
    })
    // Every digest re-read once and matching: the audit runs and a clean copy raises nothing.
    await waitUntil(async () => ((await metric('kafka_mirror_digest_audit_records_total')) ?? 0) >= RECORDS, {
      timeoutMs: 30_000,
      message: 'the audit to re-read every digested record',
    })
    assert.equal(await metric('kafka_mirror_digest_mismatches_total'), undefined)
    assert.equal(errorLines.length, 0, errorLines.join('\n'))

    // Behind the mirror's back: the target topic rewritten with the same records but one value changed (offset 1234), the same number of records.
    const copy = await readAll(target, topic)
    assert.equal(copy.length, RECORDS)
    await deleteTopicIfExists(target, topic)
    await waitUntil(async () => !(await withAdmin(target, admin => admin.listTopics())).includes(topic), { message: 'the target topic to be deleted' })
    await withAdmin(target, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] }))
    await produce(
      target,
      topic,
      copy.map(r => ({
        partition: 0,
        key: r.key,
        value: Number(r.offset) === 1234 ? Buffer.from('changed') : r.value,
        timestamp: r.timestamp,
        headers: r.headers,
      }))
    )
    const rewrittenAt = Date.now()

    await waitUntil(async () => (await metric('kafka_mirror_digest_mismatches_total')) === 1, {
      timeoutMs: 30_000,
      message: 'the audit to find the changed record',
    })
    t.diagnostic(`mismatch counted ${Date.now() - rewrittenAt} ms after the rewrite (audit interval ${AUDIT_INTERVAL_MS} ms)`)
    const line = errorLines.find(l => l.includes('digest mismatch'))
    assert.ok(line !== undefined, errorLines.join('\n'))
    const logged = JSON.parse(line) as Record<string, unknown>
    assert.match(
      String(logged.msg),
      new RegExp(
        `^digest mismatch: ${topic} partition 0 target offsets 1000-1999 \\(source ${topic} offsets 1000-1999, 1000 records\\): at least one record's key, value, headers or timestamp differs`
      )
    )
    assert.deepEqual([logged.topic, logged.partition, logged.targetFromOffset, logged.targetToOffset], [topic, 0, 1000, 1999])
    // The digests before and after it still match: one mismatch, not one per pass.
    const audited = (await metric('kafka_mirror_digest_audit_records_total')) ?? 0
    await waitUntil(async () => ((await metric('kafka_mirror_digest_audit_records_total')) ?? 0) >= audited + 2000, {
      timeoutMs: 30_000,
      message: 'two more audit passes',
    })
    assert.equal(await metric('kafka_mirror_digest_mismatches_total'), 1)

    await waitUntil(
      async () => (await prometheus.alerts()).some(a => a.labels.alertname === 'KafkaMirrorDigestMismatch' && a.labels.topic === topic && a.state === 'firing'),
      { timeoutMs: 60_000, message: 'Prometheus to fire KafkaMirrorDigestMismatch (grafana/alerts.yml)' }
    )
  }
)
