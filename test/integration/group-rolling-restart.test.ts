import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compareCopies, describeComparison } from '../faults/copy-comparison.js'
import { readKeys } from '../faults/kcat-reader.js'
import { startTrafficWriter } from '../faults/traffic-writer.js'
import { createTopic, deleteTopicIfExists, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const PARTITIONS = 6
const INSTANCES = 3

interface Instance {
  readonly sidecar: SidecarProcess
  readonly port: number
}

async function assigned (instance: Instance): Promise<number> {
  return sampleSum(await scrape(instance.port), 'kafka_mirror_assigned_partitions') ?? 0
}

test(
  'three instances in one group, each restarted in turn with SIGTERM under traffic, copy every record once at least once (each rebalance commits what the target acknowledged before the partitions move)',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: PARTITIONS })
    t.after(() => deleteTopicIfExists(target, topic))
    const groupId = uniqueName('rolling-group')
    // The interval commit is MirrorMaker's default (60 s), so only the commits at the rebalances and at the stops move the group.
    // A short heartbeat: the survivors hear of a rebalance soon after it begins.
    const consumer = { 'session.timeout.ms': 10_000, 'heartbeat.interval.ms': 500 }
    const start = async (): Promise<Instance> => {
      const sidecar = spawnSidecar(t, { source, target, groupId, include: topic, consumer, args: ['--offset.commit.interval.ms', '60000'] })
      const port = await sidecarHttpPort(sidecar)
      await waitMirroring(sidecar)
      return { sidecar, port }
    }
    const balanced = async (instances: readonly Instance[], what: string): Promise<void> => {
      let split: number[] = []
      await waitUntil(
        async () => {
          split = await Promise.all(instances.map(assigned))
          return split.every(n => n > 0) && split.reduce((x, y) => x + y) === PARTITIONS
        },
        { timeoutMs: 60_000, message: `${what}: every instance to own some of the ${PARTITIONS} partitions (last ${JSON.stringify(split)})` }
      )
    }
    const instances: Instance[] = []
    for (let i = 0; i < INSTANCES; i++) instances.push(await start())
    await balanced(instances, 'start')

    const writer = startTrafficWriter(source, topic, { recordsPerRound: 50, pauseMs: 50 })
    t.after(() => writer.stop())
    const copying = async (what: string): Promise<void> => {
      const copied = await totalRecords(target, topic).catch(() => 0n)
      await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= copied + 1_000n, { timeoutMs: 30_000, message: `${what}: copying` })
    }
    await copying('before the restarts')
    for (let i = 0; i < INSTANCES; i++) {
      const stopping = instances[i] as Instance
      stopping.sidecar.child.kill('SIGTERM')
      assert.equal(await stopping.sidecar.exited, 0, stopping.sidecar.stderr().slice(-2000))
      instances[i] = await start()
      await balanced(instances, `after restarting instance ${i}`)
      await copying(`after restarting instance ${i}`)
    }
    await writer.stop()
    const written = writer.written()
    await waitUntil(async () => (await totalRecords(target, topic)) >= BigInt(written), { timeoutMs: 60_000, message: `all ${written} records on the target` })
    for (const { sidecar } of instances) sidecar.child.kill('SIGTERM')
    for (const { sidecar } of instances) assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))

    const comparison = compareCopies(await readKeys(source, topic), await readKeys(target, topic))
    t.diagnostic(`${written} records written during ${INSTANCES} restarts: ${describeComparison(comparison)}`)
    assert.ok(comparison.sourceRecords >= written, `the source holds the ${written} records written`)
    assert.equal(comparison.missing, 0, describeComparison(comparison))
    assert.equal(comparison.duplicates, 0, describeComparison(comparison))
  }
)
