import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import { committedOffsets, createTopic, produce, sharedClusters, startExtraCluster, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { promtoolProblems, readyz, sampleSum, scrape, sidecarHttpPort, type Probe } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

function records (from: number, count: number): Message[] {
  return Array.from({ length: count }, (_, i) => ({ partition: (from + i) % 2, key: `k${from + i}`, value: `v${from + i}` }))
}

function retryLines (log: string): number {
  return log.split('\n').filter(line => line.includes('"msg":"writing to the target failed; retrying"')).length
}

test(
  '/readyz of the binary: 200 mirroring, 503 while the target is down, 200 again, 503 from SIGTERM through the drain; /metrics passes promtool',
  { timeout: 180_000 },
  async t => {
    const startedAt = Date.now()
    const phase = (name: string): void => {
      t.diagnostic(`${name} at ${((Date.now() - startedAt) / 1000).toFixed(1)} s`)
    }
    const { source } = await sharedClusters()
    const target = await startExtraCluster(t, 'readyz-target')
    const topic = await createTopic(t, source, { partitions: 2 })
    const drainTimeoutMs = 2_000
    const groupId = uniqueName('e2e-ready')
    const sidecar = spawnSidecar(t, { source, target, groupId, include: topic, args: ['--drain.timeout.ms', String(drainTimeoutMs)] })
    const port = await sidecarHttpPort(sidecar)
    await waitMirroring(sidecar)
    await produce(source, topic, records(0, 100))
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === 100n, { timeoutMs: 30_000, message: 'records copied' })
    await waitUntil(async () => (await readyz(port)).status === 200, { timeoutMs: 10_000, message: '/readyz 200 while mirroring' })
    phase('ready')
    const exposition = await scrape(port)
    assert.equal(sampleSum(exposition, 'kafka_mirror_assigned_partitions'), 2)

    const check = await promtoolProblems(exposition)
    assert.deepEqual(check.problems, [], `promtool check metrics on the binary's /metrics (exit ${check.code})`)
    assert.ok(check.code === 0 || check.allowed.length > 0, 'a non-zero exit is explained by the allow-listed lines')

    // Target down: sends fail, the sink reports the target disconnected.
    await target.pause()
    await produce(source, topic, records(100, 50))
    let down: Probe | undefined
    await waitUntil(
      async () => {
        down = await readyz(port)
        return down.status === 503
      },
      { timeoutMs: 60_000, message: '/readyz 503 while the target is down' }
    )
    phase('not ready (target down)')
    assert.equal(down?.body.status, 'not ready')
    assert.ok(
      down?.body.reasons?.some(reason => reason.includes('target cluster target not connected')),
      `reasons: ${JSON.stringify(down?.body.reasons)}`
    )
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200, 'an outage is not fatal')

    await target.resume()
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= 150n, { timeoutMs: 60_000, message: 'catch-up after the outage' })
    await waitUntil(async () => (await readyz(port)).status === 200, { timeoutMs: 30_000, message: '/readyz 200 again' })

    phase('ready again')
    // Everything acknowledged so far is committed: the final commit below has nothing to write, so the stop can succeed.
    await waitUntil(async () => [...(await committedOffsets(source, groupId, topic)).values()].reduce((a, b) => a + b, 0n) === 150n, {
      timeoutMs: 30_000,
      message: 'offsets of the first 150 records committed',
    })
    // A drain that cannot finish (target down, records in flight) keeps the process up for drainTimeoutMs after SIGTERM.
    const failuresSoFar = retryLines(sidecar.stderr())
    await target.pause()
    await produce(source, topic, records(150, 50))
    await waitUntil(() => retryLines(sidecar.stderr()) > failuresSoFar, { timeoutMs: 30_000, message: 'sends of the new records to fail' })
    const signalledAt = Date.now()
    sidecar.child.kill('SIGTERM')
    await waitUntil(() => sidecar.stderr().includes('"msg":"signal received; draining"'), { timeoutMs: 5_000, message: 'the signal to be logged' })
    const shutting = await readyz(port)
    assert.deepEqual([shutting.status, shutting.body.reasons], [503, ['shutting down']], 'readiness is withdrawn first, while the drain is in progress')
    assert.equal(sidecar.child.exitCode, null, 'still draining when /readyz answered')
    const code = await sidecar.exited
    const stoppedMs = Date.now() - signalledAt
    t.diagnostic(`SIGTERM with the target down: exit ${code} after ${stoppedMs} ms (drain timeout ${drainTimeoutMs} ms)`)
    assert.equal(code, 0, sidecar.stderr().slice(-2000))
    assert.ok(stoppedMs >= drainTimeoutMs - 500, `the drain waited for its deadline (${stoppedMs} ms)`)
    assert.match(sidecar.stderr(), /"msg":"drain deadline passed; records in flight stay uncommitted and will be mirrored again"/)
    await assert.rejects(fetch(`http://127.0.0.1:${port}/readyz`), 'the HTTP server is closed once the process stopped')
  }
)

test(
  'SIGTERM while the source hangs and acknowledged records are not committed yet: the final commit fails, the process says so and exits 2',
  { timeout: 120_000 },
  async t => {
    const { target } = await sharedClusters()
    const source = await startExtraCluster(t, 'final-commit-source')
    // The topic goes with its cluster (removed when the test ends), so no clean-up of its own.
    const topic = uniqueName('final-commit')
    await withAdmin(source, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2, replicationFactor: 1 }] }))
    const groupId = uniqueName('e2e-final-commit')
    // A commit interval longer than the test: only the final commit could commit these records (their
    // offset syncs are written on the target as it acknowledges, so the target stays up here).
    const sidecar = spawnSidecar(t, { source, target, groupId, include: topic, args: ['--drain.timeout.ms', '1000', '--offset.commit.interval.ms', '600000'] })
    await waitMirroring(sidecar)
    await produce(source, topic, records(0, 40))
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === 40n, { timeoutMs: 30_000, message: 'records copied' })
    const committedBefore = [...(await committedOffsets(source, groupId, topic)).values()].filter(offset => offset >= 0n)
    assert.deepEqual(committedBefore, [], 'the records copied are not committed yet')
    // Frozen, not stopped: a stopped broker makes kafkajs restart the consumer, which gives the
    // partitions up before the final commit is tried; a hung one leaves the commit to time out.
    await source.freeze()
    t.after(() => source.thaw())
    sidecar.child.kill('SIGTERM')
    const code = await sidecar.exited
    assert.equal(code, 2, sidecar.stderr().slice(-2000))
    assert.match(
      sidecar.stderr(),
      /mirror-sidecar: flow source->target: the final commit on the source cluster failed; records acknowledged since the last commit will be copied again at the next start/
    )
    await source.thaw()
    assert.deepEqual(
      [...(await committedOffsets(source, groupId, topic)).values()].filter(offset => offset > 0n),
      [],
      'nothing was committed'
    )
  }
)
