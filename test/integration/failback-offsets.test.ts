import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { committedOffsets, createTopic, endOffsets, produce, readAll, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { consumeAndCommit, readAsGroup, tagged } from '../helpers/offsets.js'
import { spawnSidecarArgs, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

interface Pair {
  readonly a: LocalCluster
  readonly b: LocalCluster
  readonly topic: string
  readonly flowGroups: { readonly A: string, readonly B: string }
  readonly config: string
}

/** Two flows A -> B and B -> A over the same topic name (Identity policy), in one sidecar: aliases A and B. */
async function activeActive (t: TestContext, prefix: string): Promise<Pair> {
  const { source: a, target: b } = await sharedClusters()
  const topic = `${uniqueName(prefix).replace(/-/g, '')}-orders`
  await createTopic(t, a, { name: topic, partitions: 2 })
  await createTopic(t, b, { name: topic, partitions: 2 })
  const flowGroups = { A: uniqueName('fb-from-a'), B: uniqueName('fb-from-b') }
  const lines: Record<string, string> = {
    clusters: 'A, B',
    'A.bootstrap.servers': a.bootstrap,
    'B.bootstrap.servers': b.bootstrap,
    'A->B.enabled': 'true',
    'B->A.enabled': 'true',
    topics: topic,
    'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
    'A->B.consumer.group.id': flowGroups.A,
    'B->A.consumer.group.id': flowGroups.B,
    'refresh.topics.interval.seconds': '1',
    'offset.flush.interval.ms': '300',
    'replication.factor': '1',
  }
  const config = join(mkdtempSync(join(tmpdir(), 'mm2-')), 'mm2.properties')
  writeFileSync(config, Object.entries(lines).map(([k, v]) => `${k} = ${v}`).join('\n') + '\n')
  return { a, b, topic, flowGroups, config }
}

async function startMirror (t: TestContext, pair: Pair): Promise<SidecarProcess> {
  const sidecar = spawnSidecarArgs(t, [pair.config, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
  await waitMirroring(sidecar)
  return sidecar
}

async function stopMirror (sidecar: SidecarProcess): Promise<void> {
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
}

/**
 * Both flows committed their source's end offsets (their offset syncs are written before each
 * commit; an empty partition has nothing to commit) and both clusters hold `records`.
 */
async function settled (pair: Pair, records: number, sidecar: SidecarProcess): Promise<void> {
  const { a, b, topic, flowGroups } = pair
  await waitUntil(async () => {
    const [endA, endB, doneA, doneB] = await Promise.all([
      endOffsets(a, topic),
      endOffsets(b, topic),
      committedOffsets(a, flowGroups.A, topic),
      committedOffsets(b, flowGroups.B, topic),
    ])
    const total = (ends: Map<number, bigint>): number => Number([...ends.values()].reduce((s, e) => s + e, 0n))
    return total(endA) === records && total(endB) === records &&
      [...endA].every(([p, end]) => end === 0n || doneA.get(p) === end) && [...endB].every(([p, end]) => end === 0n || doneB.get(p) === end)
  }, { timeoutMs: 90_000, intervalMs: 300, message: `both clusters to hold ${records} records and both flows to be caught up` }).catch(error => {
    throw new Error(`${(error as Error).message}\nsidecar log:\n${sidecar.stderr().split('\n').filter(l => !l.includes('"level":"debug"')).slice(-15).join('\n')}`)
  })
}

interface JsonPartition {
  topic: string
  partition: number
  currentOffset: number
  translatedOffset: number | null
  reReads: number | null
  plannedOffset: number | null
  action: string
}
interface JsonPlan { groups: Array<{ group: string, blocker: string | null, outcome: string, partitions: JsonPartition[] }> }

/** Runs `mirror-check failover|failback --execute` for `group` with both flows' syncs (aliases A and B); returns the plan. */
async function move (direction: 'failover' | 'failback', pair: Pair, group: string): Promise<{ code: number, plan: JsonPlan, stderr: string }> {
  const result = await runMirrorCheck([
    direction,
    '--source',
    pair.a.bootstrap,
    '--target',
    pair.b.bootstrap,
    '--source-alias',
    'A',
    '--target-alias',
    'B',
    '--group',
    group,
    '--execute',
    '--format',
    'json',
  ])
  let plan: JsonPlan
  try {
    plan = JSON.parse(result.stdout) as JsonPlan
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`)
  }
  return { code: result.code, plan, stderr: result.stderr }
}

/** What an application's consumer saw: every value it read, in order, per move. */
class Reads {
  readonly #counts = new Map<string, number>()
  readonly #before = new Set<string>()
  hear (value: string): void { this.#counts.set(value, (this.#counts.get(value) ?? 0) + 1) }
  /** Starts a new leg (after a move); `reReadSinceMove` counts what this leg read that a leg before had read. */
  move (): void { for (const v of this.#counts.keys()) this.#before.add(v) }
  reReadSinceMove (read: readonly string[]): number { return read.filter(v => this.#before.has(v)).length }
  /** Values read more than once, and values of `all` never read. */
  audit (all: readonly string[]): { reRead: number, skipped: string[] } {
    return { reRead: [...this.#counts.values()].reduce((n, c) => n + c - 1, 0), skipped: all.filter(v => !this.#counts.has(v)) }
  }
}

/** A leg of the application on one cluster: reads `counts` records per partition from the group's committed offsets and commits, as a consumer does. */
async function consumeLeg (cluster: LocalCluster, topic: string, group: string, counts: ReadonlyMap<number, number>, reads: Reads): Promise<string[]> {
  const read: string[] = []
  await consumeAndCommit(cluster, topic, group, counts, (_, value) => { read.push(value); reads.hear(value) })
  return read
}

test(
  'failover A -> B, consume and produce on B, failback B -> A: the group reads every record once, none again and none skipped, on both moves (offset syncs of both flows)',
  { timeout: 300_000 },
  async t => {
    const pair = await activeActive(t, 'fbk')
    const { a, b, topic } = pair
    const sidecar = await startMirror(t, pair)
    const group = uniqueName('fb-app')
    const reads = new Reads()

    // On A: the producers write 100 records per partition, the application reads 40 of partition 0 and 70 of partition 1.
    await produce(a, topic, [...tagged('a', 0, 100), ...tagged('a', 1, 100)])
    await consumeLeg(
      a,
      topic,
      group,
      new Map([
        [0, 40],
        [1, 70],
      ]),
      reads
    )
    await settled(pair, 200, sidecar)

    // Failover A -> B.
    const over = await move('failover', pair, group)
    assert.equal(over.code, 0, over.stderr)
    assert.deepEqual(
      over.plan.groups[0]?.partitions.map(p => [p.partition, p.currentOffset, p.plannedOffset, p.reReads, p.action]),
      [
        [0, 40, 40, 0, 'commit'],
        [1, 70, 70, 0, 'commit'],
      ]
    )
    reads.move()

    // On B: the application reads the rest of A's records on partition 0 and 10 more on partition 1;
    // its producers now write on B (50 per partition); it reads 20 of those on partition 0. The
    // flow B -> A copies them back to A.
    const onB = await consumeLeg(
      b,
      topic,
      group,
      new Map([
        [0, 60],
        [1, 10],
      ]),
      reads
    )
    await produce(b, topic, [...tagged('b', 0, 50), ...tagged('b', 1, 50)])
    onB.push(...(await consumeLeg(b, topic, group, new Map([[0, 20]]), reads)))
    assert.deepEqual(
      [onB.find(v => v.startsWith('a-0-')), onB.find(v => v.startsWith('a-1-'))],
      ['a-0-40', 'a-1-70'],
      'on B the group starts at the first record it had not read on A'
    )
    const reReadAtFailover = reads.reReadSinceMove(onB)
    await settled(pair, 300, sidecar)

    // Failback B -> A: partition 0 is past A's records (the B -> A syncs translate it), partition 1
    // still inside them (the A -> B syncs translate it: through the B -> A syncs alone it would jump
    // to B's first own record, skipping A's records 80..99).
    const back = await move('failback', pair, group)
    assert.equal(back.code, 0, back.stderr)
    assert.deepEqual(
      back.plan.groups[0]?.partitions.map(p => [p.partition, p.currentOffset, p.plannedOffset, p.reReads, p.action]),
      [
        [0, 120, 120, 0, 'commit'],
        [1, 80, 80, 0, 'commit'],
      ]
    )
    reads.move()
    await stopMirror(sidecar)

    // Back on A: the group reads to the end.
    const onA = (await readAsGroup(a, topic, group)).map(r => r.value?.toString() ?? 'null')
    for (const v of onA) reads.hear(v)
    const reReadAtFailback = reads.reReadSinceMove(onA)
    const all = (await readAll(a, topic)).map(r => r.value?.toString() ?? 'null')
    const { reRead, skipped } = reads.audit(all)
    t.diagnostic(
      `FAILBACK ${JSON.stringify({ records: all.length, readOnB: onB.length, readBackOnA: onA.length, reReadAtFailover, reReadAtFailback, reReadInAll: reRead, skipped: skipped.length })}`
    )
    assert.equal(reReadAtFailover, 0, 'nothing read again after the failover')
    assert.equal(reReadAtFailback, 0, 'nothing read again after the failback')
    assert.deepEqual(skipped, [], 'nothing skipped')
    assert.equal(reRead, 0)
    assert.equal(all.length, 300)
  }
)

test(
  'failback where the two clusters hold records in different orders: starts at the first record the group has not read, skips nothing, and says how many it reads again',
  { timeout: 300_000 },
  async t => {
    const pair = await activeActive(t, 'fbx')
    const { a, b, topic } = pair
    let sidecar = await startMirror(t, pair)
    const group = uniqueName('fb-app')
    const reads = new Reads()
    await produce(a, topic, tagged('a', 0, 30))
    await consumeLeg(a, topic, group, new Map([[0, 30]]), reads)
    await settled(pair, 30, sidecar)
    const over = await move('failover', pair, group)
    assert.equal(over.code, 0, over.stderr)
    reads.move()

    // Both clusters take writes while the mirror is down: A's 10 land on B after B's 5, and B's 5 on A after A's 10.
    await stopMirror(sidecar)
    await produce(a, topic, tagged('a-late', 0, 10))
    await produce(b, topic, tagged('b', 0, 5))
    sidecar = await startMirror(t, pair)
    await settled(pair, 45, sidecar)
    // On B: B's 5, then 3 of A's late ones.
    const onB = await consumeLeg(b, topic, group, new Map([[0, 8]]), reads)
    assert.deepEqual(onB.slice(0, 6), ['b-0-0', 'b-0-1', 'b-0-2', 'b-0-3', 'b-0-4', 'a-late-0-0'])

    const back = await move('failback', pair, group)
    assert.equal(back.code, 0, back.stderr)
    // On A the order is A's 30, A's late 10, B's 5: the first record not read is a-late-0-3 (A offset 33); from there B's 5 come again.
    assert.deepEqual(
      back.plan.groups[0]?.partitions.map(p => [p.currentOffset, p.plannedOffset, p.reReads]),
      [[38, 33, 5]]
    )
    assert.match(back.stderr, /orders-0 \(5\): the two clusters hold those records in different orders .*\(nothing skipped\)/)
    reads.move()
    await stopMirror(sidecar)
    const onA = (await readAsGroup(a, topic, group)).map(r => r.value?.toString() ?? 'null')
    for (const v of onA) reads.hear(v)
    const { reRead, skipped } = reads.audit((await readAll(a, topic)).map(r => r.value?.toString() ?? 'null'))
    t.diagnostic(
      `FAILBACK-INTERLEAVED ${JSON.stringify({ readBackOnA: onA.length, reReadAtFailback: reads.reReadSinceMove(onA), reported: back.plan.groups[0]?.partitions[0]?.reReads, skipped: skipped.length })}`
    )
    assert.equal(reads.reReadSinceMove(onA), 5, 'exactly the records the plan said are read again')
    assert.equal(reRead, 5)
    assert.deepEqual(skipped, [], 'nothing skipped')
  }
)
