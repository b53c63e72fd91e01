import assert from 'node:assert/strict'
import { test } from 'node:test'
import { auditKeys, createTopic, produce, readAll, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { spawnSidecar } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'
import { faultClusters } from './fault-clusters.js'

const RECORDS = 300

test(
  'a start with one of three target brokers hung (SIGSTOP) waits it out, logging why, then copies every record once the broker is back',
  { timeout: 300_000 },
  async t => {
    const { source } = await sharedClusters()
    const { target } = faultClusters()
    await target.start()
    await target.heal()
    const topic = await createTopic(t, source, { partitions: 3 })
    await produce(source, topic, Array.from({ length: RECORDS }, (_, i) => ({ partition: i % 3, key: `k${i}`, value: `v${i}` })))

    const hung = target.node(2)
    await hung.freeze()
    t.after(() => hung.thaw())
    const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('hung-start'), include: topic })
    // InitProducerId, or a coordinator still loading, on the hung broker: the start retries instead of exiting 2.
    // Which broker a start-up request goes to is the client's choice, so a start may also wait on a request to the
    // hung broker without a retry logged yet: what must hold is that it has not exited while the broker is hung.
    const hungSince = Date.now()
    await waitUntil(() => sidecar.child.exitCode !== null || sidecar.stderr().includes('failed; retrying while the cluster recovers') ||
      Date.now() - hungSince > 60_000, {
      timeoutMs: 120_000,
      message: 'a start-up step retried, or a minute passed with the broker hung',
    })
    assert.equal(sidecar.child.exitCode, null, `the sidecar exited:\n${sidecar.stderr().slice(-3000)}`)
    t.diagnostic(sidecar.stderr().split('\n').find(line => line.includes('retrying while the cluster recovers'))?.slice(0, 400) ?? '')

    await hung.thaw()
    await waitUntil(async () => sidecar.child.exitCode !== null || (await totalRecords(target, topic).catch(() => 0n)) >= BigInt(RECORDS), {
      timeoutMs: 150_000,
      message: `${RECORDS} records copied`,
    })
    assert.equal(sidecar.child.exitCode, null, `the sidecar exited:\n${sidecar.stderr().slice(-3000)}`)
    assert.deepEqual(auditKeys(await readAll(target, topic), RECORDS), { missing: 0, duplicates: 0 })
  }
)
