import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import { createTopic, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck, spawnMirrorCheck } from '../helpers/mirror-check.js'
import { commitAsAdmin } from '../helpers/offsets.js'
import { waitUntil } from '../helpers/wait.js'

const BASE_TS = 1_760_000_000_000
const KEEP = { 'retention.ms': '-1' }

function records (partition: number, count: number): Message[] {
  return Array.from({ length: count }, (_, i) => ({
    partition,
    key: `k-${partition}-${i}`,
    value: `v-${partition}-${i}`,
    timestamp: String(BASE_TS + i),
    headers: { n: String(i) },
  }))
}

interface Pair { readonly sourceTopic: string, readonly targetTopic: string, readonly base: string[] }

/**
 * A source topic with `count` records per partition and a target topic holding `copy(partition)`
 * of them (written in list order), both deleted when the test ends. `base` are the common flags.
 */
async function pair (
  t: TestContext,
  options: { partitions?: number, count: number, copy?: (source: Message[], partition: number) => Message[] }
): Promise<Pair> {
  const { source, target } = await sharedClusters()
  const partitions = options.partitions ?? 1
  // The records carry fixed 2025 timestamps: without retention.ms=-1 the broker's retention check (every 5 min, 7 days) may delete them mid-test.
  const sourceTopic = await createTopic(t, source, { partitions, configs: KEEP })
  const targetTopic = await createTopic(t, target, { partitions, configs: KEEP })
  for (let p = 0; p < partitions; p++) {
    const messages = records(p, options.count)
    await produce(source, sourceTopic, messages)
    const copied = options.copy?.(messages, p) ?? messages
    if (copied.length > 0) await produce(target, targetTopic, copied)
  }
  return {
    sourceTopic,
    targetTopic,
    base: ['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', sourceTopic, '--target-topic', targetTopic],
  }
}

const tamper = (m: Message): Message => ({ ...m, value: `tampered ${String(m.value)}` })

interface VerifyJson {
  passed: boolean
  total: { checked: number, missing: number, duplicated: number, extra: number, changed: number, outOfOrder: number }
  partitions: Array<{
    partition: number
    sourceFromOffset: number
    sourceUntilOffset: number
    counts: VerifyJson['total']
    findings: Array<{ kind: string, sourceOffset?: number, targetOffset?: number }>
    findingsNotListed: Record<string, number>
    notes: string[]
  }>
}

async function verifyJson (args: string[]): Promise<{ code: number, json: VerifyJson, stderr: string, ms: number }> {
  const result = await runMirrorCheck([...args, '--format', 'json'])
  assert.ok(result.stdout.startsWith('{'), `JSON on stdout (exit ${result.code}): ${result.stdout}\n${result.stderr}`)
  return { code: result.code, json: JSON.parse(result.stdout) as VerifyJson, stderr: result.stderr, ms: result.ms }
}

const kinds = (json: VerifyJson): Array<[string, number | undefined]> =>
  json.partitions.flatMap(p => p.findings.map(f => [f.kind, f.sourceOffset ?? f.targetOffset] as [string, number | undefined]))

test('verify --from-offset/--from-time/--to-offset compare only that range: a difference inside is found, one outside is not', { timeout: 30_000 }, async t => {
  // Source offsets 20 and 80 were changed in the copy.
  const env = await pair(t, { count: 100, copy: m => m.map((r, i) => i === 20 || i === 80 ? tamper(r) : r) })
  const noGroup = ['--group', uniqueName('no-mirror')]

  const all = await verifyJson([...env.base, ...noGroup])
  assert.equal(all.code, 1)
  assert.deepEqual(kinds(all.json), [['changed', 20], ['changed', 80]])

  const tail = await verifyJson([...env.base, ...noGroup, '--from-offset', '50'])
  assert.equal(tail.code, 1)
  assert.deepEqual([tail.json.partitions[0]!.sourceFromOffset, tail.json.partitions[0]!.sourceUntilOffset, tail.json.total.checked], [50, 100, 50])
  assert.deepEqual(kinds(tail.json), [['changed', 80]])

  // Record i has timestamp BASE_TS + i: --from-time starts at the first record at or after it.
  const byTime = await verifyJson([...env.base, ...noGroup, '--from-time', new Date(BASE_TS + 50).toISOString()])
  assert.equal(byTime.code, 1)
  assert.deepEqual([byTime.json.partitions[0]!.sourceFromOffset, byTime.json.total.checked], [50, 50])
  assert.deepEqual(kinds(byTime.json), [['changed', 80]])

  const head = await verifyJson([...env.base, ...noGroup, '--to-offset', '50'])
  assert.equal(head.code, 1)
  assert.deepEqual([head.json.partitions[0]!.sourceFromOffset, head.json.partitions[0]!.sourceUntilOffset, head.json.total.checked], [0, 50, 50])
  assert.deepEqual(kinds(head.json), [['changed', 20]])

  const between = await verifyJson([...env.base, ...noGroup, '--from-offset', '30', '--to-offset', '70'])
  assert.equal(between.code, 0, 'neither change lies in 30..69')
  assert.equal(between.json.passed, true)
  assert.deepEqual([between.json.total.checked, between.json.total.changed], [40, 0])

  const inverted = await runMirrorCheck([...env.base, ...noGroup, '--from-offset', '70', '--to-offset', '30'])
  assert.equal(inverted.code, 2)
  assert.equal(inverted.stderr, 'mirror-check: --to-offset "30" is not after --from-offset "70"; give an end after the start\n')
})

test('verify --max-findings lists that many findings per kind, counts them all and says how many are not listed', { timeout: 30_000 }, async t => {
  const changed = [5, 15, 25, 35, 45, 55, 65]
  const env = await pair(t, { count: 80, copy: m => m.map((r, i) => changed.includes(i) ? tamper(r) : r) })
  const noGroup = ['--group', uniqueName('no-mirror')]

  const limited = await verifyJson([...env.base, ...noGroup, '--max-findings', '3'])
  assert.equal(limited.code, 1)
  assert.equal(limited.json.total.changed, 7, 'counts are complete')
  assert.deepEqual(kinds(limited.json), [['changed', 5], ['changed', 15], ['changed', 25]])
  assert.deepEqual(limited.json.partitions[0]!.findingsNotListed, { changed: 4 })

  const table = await runMirrorCheck([...env.base, ...noGroup, '--max-findings', '3'])
  assert.equal(table.code, 1)
  const listed = table.stdout.split('\n').filter(l => l.startsWith('changed value: '))
  assert.deepEqual(listed, [
    'changed value: source 0@5 -> target 0@5',
    'changed value: source 0@15 -> target 0@15',
    'changed value: source 0@25 -> target 0@25',
  ])
  assert.match(table.stdout, /^partition 0: 4 more changed not listed \(--max-findings 3\)$/m)

  const byDefault = await verifyJson([...env.base, ...noGroup])
  assert.equal(byDefault.json.partitions[0]!.findings.length, 7, 'the default (20) lists all seven')
  assert.deepEqual(byDefault.json.partitions[0]!.findingsNotListed, {})
})

test('verify --lookahead-records: a record moved further than the lookahead is missing plus extra, within it out of order', { timeout: 30_000 }, async t => {
  // The copy of source offset 10 was written 150 records later (target offset 160).
  const env = await pair(t, { count: 200, copy: m => [...m.slice(0, 10), ...m.slice(11, 161), m[10]!, ...m.slice(161)] })
  const noGroup = ['--group', uniqueName('no-mirror')]

  const wide = await verifyJson([...env.base, ...noGroup])
  assert.equal(wide.code, 1)
  assert.deepEqual([wide.json.total.checked, wide.json.total.missing, wide.json.total.extra, wide.json.total.outOfOrder], [200, 0, 0, 1])
  assert.deepEqual(wide.json.partitions[0]!.findings.map(f => [f.kind, f.sourceOffset, f.targetOffset]), [['out-of-order', 10, 160]])

  const narrow = await verifyJson([...env.base, ...noGroup, '--lookahead-records', '100'])
  assert.equal(narrow.code, 1)
  assert.deepEqual([narrow.json.total.checked, narrow.json.total.missing, narrow.json.total.extra, narrow.json.total.outOfOrder], [200, 1, 1, 0])
  assert.deepEqual(narrow.json.partitions[0]!.findings.map(f => [f.kind, f.sourceOffset ?? f.targetOffset]), [['missing', 10], ['extra', 160]])
})

test('verify --until-mirrored stops at the group\'s committed offsets and requires the group', { timeout: 30_000 }, async t => {
  const { source } = await sharedClusters()
  // Partition 0 is mirrored up to offset 30 (the rest not yet copied); partition 1 not at all.
  const env = await pair(t, { partitions: 2, count: 50, copy: (m, p) => p === 0 ? m.slice(0, 30) : [] })
  const group = uniqueName('mirror')
  await commitAsAdmin(source, group, env.sourceTopic, new Map([[0, 30n]]))

  const mirrored = await verifyJson([...env.base, '--group', group, '--until-mirrored'])
  assert.equal(mirrored.code, 0, mirrored.stderr)
  assert.deepEqual(mirrored.json.partitions.map(p => [p.partition, p.sourceFromOffset, p.sourceUntilOffset, p.counts.checked]), [[0, 0, 30, 30], [1, 0, 0, 0]])
  assert.match(mirrored.stderr, new RegExp(`group '${group}' has no committed offset on partition 1: nothing mirrored to compare`))

  // Without --until-mirrored a partition the group has not committed is compared to its end: all 50 are missing.
  const byDefault = await verifyJson([...env.base, '--group', group])
  assert.equal(byDefault.code, 1)
  assert.deepEqual(byDefault.json.partitions.map(p => [p.partition, p.counts.checked, p.counts.missing]), [[0, 30, 0], [1, 50, 50]])

  const noGroup = await runMirrorCheck([...env.base, '--group', 'absent-mirror', '--until-mirrored'])
  assert.equal(noGroup.code, 2)
  assert.equal(
    noGroup.stderr,
    "mirror-check: --until-mirrored: consumer group 'absent-mirror' does not exist on the source cluster; name the mirror's group with --group\n"
  )
  const both = await runMirrorCheck([...env.base, '--group', group, '--until-mirrored', '--to-offset', '10'])
  assert.equal(both.code, 2)
  assert.match(both.stderr, /^mirror-check: --to-offset and --until-mirrored exclude each other; give one\n$/)
})

test('verify --wait waits for the group to reach the source end, then verifies everything; a timeout fails the check', { timeout: 45_000 }, async t => {
  const { source, target } = await sharedClusters()
  const env = await pair(t, { count: 50, copy: m => m.slice(0, 30) })
  const group = uniqueName('mirror')
  await commitAsAdmin(source, group, env.sourceTopic, new Map([[0, 30n]]))

  // --verbose logs each request on stderr: two OffsetFetch requests mean the wait is polling the group.
  const waiting = spawnMirrorCheck(t, [...env.base, '--group', group, '--wait', '20', '--format', 'json', '--verbose'])
  await waitUntil(() => (waiting.stderr().match(/Request OffsetFetch/g) ?? []).length >= 2 || waiting.child.exitCode !== null, {
    timeoutMs: 15_000,
    message: 'verify --wait polling the group',
  })
  assert.equal(waiting.child.exitCode, null, `still waiting: ${waiting.stdout()}`)
  // The mirror catches up: the rest is copied, then committed.
  await produce(target, env.targetTopic, records(0, 50).slice(30))
  await commitAsAdmin(source, group, env.sourceTopic, new Map([[0, 50n]]))
  const started = Date.now()
  const done = await waiting.exited
  assert.deepEqual(done, { code: 0, signal: null }, waiting.stderr().split('\n').filter(l => !l.startsWith('{')).join('\n'))
  const json = JSON.parse(waiting.stdout()) as VerifyJson
  assert.equal(json.passed, true)
  assert.equal(json.total.checked, 50, 'all 50 records, not the 30 committed when it started')
  assert.ok(Date.now() - started < 10_000, 'returns once the group caught up, well before --wait ran out')

  // The group never reaches the end: after --wait the check fails, saying why.
  const stuck = await pair(t, { count: 50, copy: m => m.slice(0, 30) })
  await commitAsAdmin(source, group, stuck.sourceTopic, new Map([[0, 30n]]))
  const timedOut = await verifyJson([...stuck.base, '--group', group, '--wait', '1'])
  assert.equal(timedOut.code, 1, timedOut.stderr)
  assert.equal(timedOut.json.passed, false)
  assert.equal(timedOut.json.total.checked, 30)
  assert.match(timedOut.stderr, new RegExp(`--wait: group '${group}' still behind the source end offsets on partition\\(s\\) 0 after 1 s`))
  assert.ok(timedOut.ms >= 1_000 && timedOut.ms < 10_000, `took ${timedOut.ms} ms`)
})
