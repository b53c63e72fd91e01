import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { commitAsAdmin, loadCheckpoints, tagged } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

test(
  'one coordinator among the processes of a flow: only it writes checkpoints; when it dies another takes over, visible in kafka_mirror_coordinator',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const prefix = uniqueName('coord')
    const topics = [await createTopic(t, source, { name: `${prefix}-a`, partitions: 2 }), await createTopic(t, source, { name: `${prefix}-b`, partitions: 2 })]
    for (const topic of topics) await produce(source, topic, [...tagged('c', 0, 20), ...tagged('c', 1, 20)])
    const app = `${prefix}-app`
    for (const topic of topics) {
      await commitAsAdmin(
        source,
        app,
        topic,
        new Map([
          [0, 10n],
          [1, 5n],
        ])
      )
    }
    const run = {
      source,
      target,
      groupId: uniqueName('coord-mirror'),
      include: `${prefix}-.*`,
      consumer: { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 1000 },
      args: ['--sync.group.offsets.enabled', 'true', '--groups', `${prefix}-.*`, '--sync.group.offsets.interval.seconds', '1'],
    }
    const sidecars = [spawnSidecar(t, run), spawnSidecar(t, run)]
    for (const sidecar of sidecars) await waitMirroring(sidecar)
    const ports = await Promise.all(sidecars.map(sidecar => sidecarHttpPort(sidecar)))
    const gauge = async (i: number, name: string): Promise<number> => sampleSum(await scrape(ports[i] as number), name) ?? 0
    // Both own partitions once the group settled; exactly one of them coordinates.
    await waitUntil(
      async () =>
        (await gauge(0, 'kafka_mirror_assigned_partitions')) > 0 &&
        (await gauge(1, 'kafka_mirror_assigned_partitions')) > 0 &&
        (await gauge(0, 'kafka_mirror_coordinator')) + (await gauge(1, 'kafka_mirror_coordinator')) === 1,
      { timeoutMs: 60_000, message: 'the partitions to be shared with one coordinator' }
    )
    const coordinator = (await gauge(0, 'kafka_mirror_coordinator')) === 1 ? 0 : 1
    const other = 1 - coordinator
    await waitUntil(async () => (await loadCheckpoints(target)).some(c => c.group === app), {
      timeoutMs: 30_000,
      intervalMs: 500,
      message: 'checkpoints of the application group',
    })
    await waitUntil(async () => (await gauge(coordinator, 'kafka_mirror_checkpoints_written_total')) > 0, {
      timeoutMs: 30_000,
      message: 'the coordinator to count its checkpoints',
    })
    assert.equal(await gauge(other, 'kafka_mirror_checkpoints_written_total'), 0, 'the other process writes none')

    const dead = sidecars[coordinator] as SidecarProcess
    dead.child.kill('SIGKILL')
    await dead.exited
    // The group notices after the session timeout (6 s) and gives the survivor every partition.
    await waitUntil(async () => (await gauge(other, 'kafka_mirror_coordinator')) === 1, { timeoutMs: 45_000, message: 'the survivor to take over' })
    await commitAsAdmin(source, app, topics[0] as string, new Map([[0, 15n]]))
    await waitUntil(
      async () => (await loadCheckpoints(target)).some(c => c.group === app && c.topic === topics[0] && c.partition === 0 && c.upstreamOffset === 15n),
      { timeoutMs: 30_000, intervalMs: 500, message: 'the new coordinator to checkpoint the group' }
    )
    assert.ok((await gauge(other, 'kafka_mirror_checkpoints_written_total')) > 0)
    const survivor = sidecars[other] as SidecarProcess
    survivor.child.kill('SIGTERM')
    assert.equal(await survivor.exited, 0)
  }
)
