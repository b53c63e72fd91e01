import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import { createTopic, produce, readAll, sharedClusters, uniqueName, type ReadRecord } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'

const PER_PARTITION = 200
const BASE_TS = 1_760_000_000_000
/** The records carry fixed 2025 timestamps: without retention.ms=-1 the broker's retention check (every 5 min, 7 days) may delete them mid-test. */
const KEEP = { 'retention.ms': '-1' }

function sourceMessages (partition: number): Message[] {
  return Array.from({ length: PER_PARTITION }, (_, i) => ({
    partition,
    key: `key-${partition}-${i}`,
    value: `value-${partition}-${i}-${'x'.repeat(i % 17)}`,
    timestamp: String(BASE_TS + partition * 1_000_000 + i * 10),
    headers: { trace: `t-${partition}-${i}`, ...(i % 3 === 0 ? { kind: 'third' } : {}) },
  }))
}

/** The source records of one partition as messages that keep partition, key, value, headers and timestamp. */
function asMessages (records: readonly ReadRecord[]): Message[] {
  return records.map(r => ({ partition: r.partition, key: r.key, value: r.value, timestamp: r.timestamp, headers: { ...r.headers } as Message['headers'] }))
}

interface Copy { readonly 0: Message[], readonly 1: Message[] }

async function setup (
  t: TestContext
): Promise<{ sourceTopic: string, bootstrap: { source: string, target: string }, copy: Copy, writeTarget: (copy: Copy) => Promise<string> }> {
  const { source, target } = await sharedClusters()
  const sourceTopic = await createTopic(t, source, { partitions: 2, configs: KEEP })
  await produce(source, sourceTopic, [...sourceMessages(0), ...sourceMessages(1)])
  const records = await readAll(source, sourceTopic)
  const copy: Copy = [asMessages(records.filter(r => r.partition === 0)), asMessages(records.filter(r => r.partition === 1))]
  const writeTarget = async (c: Copy): Promise<string> => {
    const topic = await createTopic(t, target, { partitions: 2, configs: KEEP })
    // One send per partition keeps the order of the list in the target partition.
    for (const messages of [c[0], c[1]]) if (messages.length > 0) await produce(target, topic, messages)
    return topic
  }
  return { sourceTopic, bootstrap: { source: source.bootstrap, target: target.bootstrap }, copy, writeTarget }
}

interface VerifyJson {
  passed: boolean
  total: { checked: number, missing: number, duplicated: number, extra: number, changed: number, outOfOrder: number, changedFields: Record<string, number> }
  partitions: Array<{
    partition: number
    counts: VerifyJson['total']
    findings: Array<{ kind: string, sourceOffset?: number, targetOffset?: number, fields?: string[] }>
  }>
  misplaced: Array<{ sourcePartition: number, sourceOffset: number, targetPartition: number, targetOffset: number }>
}

async function verify (
  env: Awaited<ReturnType<typeof setup>>,
  targetTopic: string,
  extra: string[] = []
): Promise<{ code: number, json: VerifyJson, stderr: string }> {
  const result = await runMirrorCheck([
    'verify',
    '--source',
    env.bootstrap.source,
    '--target',
    env.bootstrap.target,
    '--topic',
    env.sourceTopic,
    '--target-topic',
    targetTopic,
    '--group',
    uniqueName('no-mirror'),
    '--format',
    'json',
    ...extra,
  ])
  assert.ok(result.stdout.startsWith('{'), `JSON on stdout, got: ${result.stdout}\nstderr: ${result.stderr}`)
  return { code: result.code, json: JSON.parse(result.stdout) as VerifyJson, stderr: result.stderr }
}

const zero = { missing: 0, duplicated: 0, extra: 0, changed: 0, outOfOrder: 0 }
function counts (c: VerifyJson['total']) {
  return { checked: c.checked, missing: c.missing, duplicated: c.duplicated, extra: c.extra, changed: c.changed, outOfOrder: c.outOfOrder }
}

test('verify passes on a faithful copy, record by record and with --digest', { timeout: 120_000 }, async t => {
  const env = await setup(t)
  const target = await env.writeTarget(env.copy)
  for (const mode of [[], ['--digest', '--digest-range-records', '50']]) {
    const { code, json } = await verify(env, target, mode)
    assert.equal(code, 0, `exit code with ${mode.join(' ')}`)
    assert.equal(json.passed, true)
    assert.deepEqual(counts(json.total), { checked: 2 * PER_PARTITION, ...zero })
  }
  const table = await runMirrorCheck([
    'verify',
    '--source',
    env.bootstrap.source,
    '--target',
    env.bootstrap.target,
    '--topic',
    env.sourceTopic,
    '--target-topic',
    target,
    '--group',
    uniqueName('no-mirror'),
  ])
  assert.equal(table.code, 0)
  assert.match(table.stdout, /PASSED: 400 records checked/)
})

test('verify reports at-least-once duplicates: exit 1, or 0 with --allow-duplicates', { timeout: 120_000 }, async t => {
  const env = await setup(t)
  // The mirror re-sent records 100..119 of partition 0 after a restart.
  const target = await env.writeTarget([[...env.copy[0].slice(0, 120), ...env.copy[0].slice(100)], env.copy[1]])
  const strict = await verify(env, target)
  assert.equal(strict.code, 1)
  assert.deepEqual(counts(strict.json.total), { checked: 2 * PER_PARTITION, ...zero, duplicated: 20 })
  assert.deepEqual(strict.json.partitions[0]!.findings.filter(f => f.kind === 'duplicated').map(f => f.targetOffset).slice(0, 3), [120, 121, 122])
  const allowed = await verify(env, target, ['--allow-duplicates'])
  assert.equal(allowed.code, 0)
  assert.equal(allowed.json.passed, true)
  assert.equal(allowed.json.total.duplicated, 20)
})

interface Fault {
  readonly name: string
  readonly make: (copy: Copy) => Copy
  readonly expect: Partial<Record<keyof typeof zero, number>>
  readonly check: (json: VerifyJson) => void
}

const p0 = (copy: Copy, f: (list: Message[]) => Message[]): Copy => [f([...copy[0]]), copy[1]]
const findings = (json: VerifyJson, partition: number) => json.partitions.find(p => p.partition === partition)!.findings

const faults: Fault[] = [
  {
    name: 'a missing record',
    make: c => p0(c, l => l.filter((_, i) => i !== 50)),
    expect: { missing: 1 },
    check: json => assert.deepEqual(findings(json, 0).map(f => [f.kind, f.sourceOffset]), [['missing', 50]]),
  },
  {
    name: 'a duplicated record',
    make: c => p0(c, l => [...l.slice(0, 51), l[50]!, ...l.slice(51)]),
    expect: { duplicated: 1 },
    check: json => assert.deepEqual(findings(json, 0).map(f => [f.kind, f.targetOffset]), [['duplicated', 51]]),
  },
  {
    name: 'an extra record',
    make: c => p0(c, l => [...l.slice(0, 80), { partition: 0, key: 'intruder', value: 'not from the source', timestamp: String(BASE_TS + 5) }, ...l.slice(80)]),
    expect: { extra: 1 },
    check: json => assert.deepEqual(findings(json, 0).map(f => [f.kind, f.targetOffset]), [['extra', 80]]),
  },
  {
    name: 'a changed value',
    make: c => p0(c, l => l.map((m, i) => i === 60 ? { ...m, value: 'tampered' } : m)),
    expect: { changed: 1 },
    check: json => assert.deepEqual(findings(json, 0).map(f => [f.kind, f.sourceOffset, f.targetOffset, f.fields]), [['changed', 60, 60, ['value']]]),
  },
  {
    name: 'a changed key',
    make: c => p0(c, l => l.map((m, i) => i === 61 ? { ...m, key: 'other-key' } : m)),
    expect: { changed: 1 },
    check: json => assert.deepEqual(findings(json, 0).map(f => [f.kind, f.sourceOffset, f.fields]), [['changed', 61, ['key']]]),
  },
  {
    name: 'a dropped header',
    make: c => p0(c, l => l.map((m, i) => i === 63 ? { ...m, headers: { trace: m.headers!.trace! } } : m)),
    expect: { changed: 1 },
    check: json => assert.deepEqual(findings(json, 0).map(f => [f.kind, f.sourceOffset, f.fields]), [['changed', 63, ['headers']]]),
  },
  {
    name: 'a changed timestamp',
    make: c => p0(c, l => l.map((m, i) => i === 64 ? { ...m, timestamp: String(Number(m.timestamp) + 1) } : m)),
    expect: { changed: 1 },
    check: json => assert.deepEqual(findings(json, 0).map(f => [f.kind, f.sourceOffset, f.fields]), [['changed', 64, ['timestamp']]]),
  },
  {
    name: 'two swapped records',
    make: c => p0(c, l => { [l[90], l[91]] = [l[91]!, l[90]!]; return l }),
    expect: { outOfOrder: 1 },
    check: json => assert.deepEqual(findings(json, 0).map(f => [f.kind, f.sourceOffset, f.targetOffset]), [['out-of-order', 90, 91]]),
  },
  {
    name: 'a record in the wrong partition',
    make: c => [c[0].filter((_, i) => i !== 70), [...c[1].slice(0, 30), { ...c[0][70]!, partition: 1 }, ...c[1].slice(30)]],
    expect: { missing: 1, extra: 1 },
    check: json => {
      assert.deepEqual(findings(json, 0).map(f => [f.kind, f.sourceOffset]), [['missing', 70]])
      assert.deepEqual(findings(json, 1).map(f => [f.kind, f.targetOffset]), [['extra', 30]])
      assert.deepEqual(json.misplaced, [{ sourcePartition: 0, sourceOffset: 70, targetPartition: 1, targetOffset: 30 }])
    },
  },
  {
    name: 'a truncated tail',
    make: c => p0(c, l => l.slice(0, 180)),
    expect: { missing: 20 },
    check: json => assert.deepEqual(findings(json, 0).map(f => f.sourceOffset), Array.from({ length: 20 }, (_, i) => 180 + i)),
  },
]

test('verify finds and locates each kind of fault', { timeout: 300_000 }, async t => {
  const env = await setup(t)
  for (const fault of faults) {
    await t.test(fault.name, async () => {
      const target = await env.writeTarget(fault.make(env.copy))
      const { code, json } = await verify(env, target)
      assert.equal(code, 1, 'exit code 1: the check failed')
      assert.equal(json.passed, false)
      assert.deepEqual(counts(json.total), { checked: 2 * PER_PARTITION, ...zero, ...fault.expect })
      fault.check(json)
    })
  }
})

test('verify --digest descends only into the differing range and still locates the fault', { timeout: 120_000 }, async t => {
  const env = await setup(t)
  const target = await env.writeTarget(faults[0]!.make(env.copy))
  const { code, json } = await verify(env, target, ['--digest', '--digest-range-records', '40'])
  assert.equal(code, 1)
  assert.deepEqual(counts(json.total), { checked: 2 * PER_PARTITION, ...zero, missing: 1 })
  assert.deepEqual(findings(json, 0).map(f => [f.kind, f.sourceOffset]), [['missing', 50]])
})
