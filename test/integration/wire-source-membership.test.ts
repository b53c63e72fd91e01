import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { compareCopies, describeComparison } from '../faults/copy-comparison.js'
import { readKeys } from '../faults/kcat-reader.js'
import { startTrafficWriter, type TrafficWriter } from '../faults/traffic-writer.js'
import { createTopic, deleteTopicIfExists, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

/** The sidecars here read their source through the wire layer (`WireRecordSource`). */
const WIRE = { MIRROR_SOURCE_CONSUMER: 'wire' }
const PARTITIONS = 6

interface Instance {
  readonly sidecar: SidecarProcess
  readonly port: number
}

async function assigned (instance: Instance): Promise<number> {
  return sampleSum(await scrape(instance.port), 'kafka_mirror_assigned_partitions') ?? 0
}

/** A group of sidecars on one topic of the shared clusters, traffic written to it, and the check that every record is on the target. */
async function mirrorGroup (t: TestContext, consumer: Record<string, string | number>) {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: PARTITIONS })
  t.after(() => deleteTopicIfExists(target, topic))
  const groupId = uniqueName('wire-source-group')
  const start = async (extra: Record<string, string | number> = {}): Promise<Instance> => {
    // The interval commit is MirrorMaker's default (60 s): only the commits when partitions move, and at stop, move the group.
    const run = { source, target, groupId, include: topic, consumer: { ...consumer, ...extra }, args: ['--offset.commit.interval.ms', '60000'], env: WIRE }
    const sidecar = spawnSidecar(t, run)
    const port = await sidecarHttpPort(sidecar)
    await waitMirroring(sidecar)
    return { sidecar, port }
  }
  const balanced = async (instances: readonly Instance[], what: string): Promise<number[]> => {
    let split: number[] = []
    await waitUntil(async () => {
      split = await Promise.all(instances.map(assigned))
      return split.every(n => n > 0) && split.reduce((x, y) => x + y) === PARTITIONS
    }, { timeoutMs: 60_000, message: `${what}: every instance to own some of the ${PARTITIONS} partitions (last ${JSON.stringify(split)})` })
    return split
  }
  const copying = async (what: string): Promise<void> => {
    const copied = await totalRecords(target, topic).catch(() => 0n)
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= copied + 500n, { timeoutMs: 30_000, message: `${what}: copying` })
  }
  const writer = (): TrafficWriter => {
    const started = startTrafficWriter(source, topic, { recordsPerRound: 50, pauseMs: 50 })
    t.after(() => started.stop())
    return started
  }
  const compared = async (written: number, instances: readonly Instance[]) => {
    await waitUntil(async () => (await totalRecords(target, topic)) >= BigInt(written), { timeoutMs: 60_000, message: `all ${written} records on the target` })
    for (const { sidecar } of instances) sidecar.child.kill('SIGTERM')
    for (const { sidecar } of instances) assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
    const comparison = compareCopies(await readKeys(source, topic), await readKeys(target, topic))
    assert.ok(comparison.sourceRecords >= written, `the source holds the ${written} records written`)
    return comparison
  }
  return { start, balanced, copying, writer, compared }
}

for (const protocol of ['classic', 'consumer'] as const) {
  test(
    `wire source, group.protocol=${protocol}: three instances, each restarted in turn with SIGTERM under traffic, copy every record exactly once at-least-once ` +
      '(each gives its partitions up only after committing what the target acknowledged)',
    { timeout: 240_000 },
    async t => {
      // KIP-848 sets session and heartbeat times on the broker: the classic ones are for the classic protocol only.
      const group = await mirrorGroup(t, protocol === 'classic'
        ? { 'group.protocol': 'classic', 'session.timeout.ms': 10_000, 'heartbeat.interval.ms': 500 }
        : { 'group.protocol': 'consumer' })
      const instances: Instance[] = []
      for (let i = 0; i < 3; i++) instances.push(await group.start())
      await group.balanced(instances, 'start')
      const writer = group.writer()
      await group.copying('before the restarts')
      for (let i = 0; i < instances.length; i++) {
        const stopping = instances[i] as Instance
        stopping.sidecar.child.kill('SIGTERM')
        assert.equal(await stopping.sidecar.exited, 0, stopping.sidecar.stderr().slice(-2000))
        instances[i] = await group.start()
        await group.balanced(instances, `after restarting instance ${i}`)
        await group.copying(`after restarting instance ${i}`)
      }
      await writer.stop()
      const comparison = await group.compared(writer.written(), instances)
      t.diagnostic(`${protocol}: ${writer.written()} records written during 3 restarts: ${describeComparison(comparison)}`)
      assert.equal(comparison.missing, 0, describeComparison(comparison))
      assert.equal(comparison.duplicates, 0, describeComparison(comparison))
    }
  )
}

test(
  'wire source, static membership (KIP-345): an instance killed with kill -9 and started again with its group.instance.id takes its partitions back ' +
    'well within the session timeout, the other instance never takes them, and no record is lost',
  { timeout: 240_000 },
  async t => {
    const sessionTimeoutMs = 30_000
    const group = await mirrorGroup(t, { 'group.protocol': 'classic', 'session.timeout.ms': sessionTimeoutMs, 'heartbeat.interval.ms': 500 })
    const a = await group.start({ 'group.instance.id': 'a' })
    let b = await group.start({ 'group.instance.id': 'b' })
    const [ofA, ofB] = await group.balanced([a, b], 'start')
    const writer = group.writer()
    await group.copying('before the kill')
    b.sidecar.child.kill('SIGKILL')
    await b.sidecar.exited
    const killedAt = Date.now()
    b = await group.start({ 'group.instance.id': 'b' })
    await waitUntil(async () => (await assigned(b)) === ofB, { timeoutMs: sessionTimeoutMs, message: `b to own its ${ofB} partitions again` })
    const backInMs = Date.now() - killedAt
    // Had the group moved b's partitions, a would have owned all of them for a while: it never did.
    assert.equal(await assigned(a), ofA)
    await group.copying('after the restart')
    await writer.stop()
    const comparison = await group.compared(writer.written(), [a, b])
    t.diagnostic(`b owned its partitions again ${backInMs} ms after kill -9 (session timeout ${sessionTimeoutMs} ms): ${describeComparison(comparison)}`)
    assert.ok(backInMs < sessionTimeoutMs / 2, `b took its partitions back after ${backInMs} ms`)
    // Killed, b committed nothing since its last commit: it copies that stretch again (at-least-once), and loses nothing.
    assert.equal(comparison.missing, 0, describeComparison(comparison))
  }
)
