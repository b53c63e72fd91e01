import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import { createTopic, produce, readAll, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'

const RECORDS = 100
/** Where the mirror's group stands: records 60..99 are copied on the target but not committed. */
const COMMITTED = 60
const BASE_TS = 1_760_000_000_000
const KEEP = { 'retention.ms': '-1' }

interface BeyondJson { records: number, duplicated: number, unmatched: number, partitions: number }
interface VerifyJson {
  passed: boolean
  checkedUpTo: string
  total: { checked: number, duplicated: number, missing: number, extra: number }
  beyondCommitted: BeyondJson
  partitions: Array<{
    partition: number
    sourceFromOffset: number
    sourceUntilOffset: number
    beyondCommitted: (BeyondJson & { fromTargetOffset: number, untilTargetOffset: number, duplicateOffsets: number[] }) | null
  }>
}

/**
 * A source partition of 100 records whose mirror group committed offset 60, and `writeTarget`,
 * which writes the given copies (source offsets, in order, as the mirror writes them) to a new
 * target topic.
 */
async function setup (t: TestContext) {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { configs: KEEP })
  await produce(
    source,
    topic,
    Array.from({ length: RECORDS }, (_, i) => ({
      partition: 0,
      key: `key-${i}`,
      value: `value-${i}`,
      timestamp: String(BASE_TS + i * 10),
      headers: { n: String(i) },
    }))
  )
  const records = await readAll(source, topic)
  const group = uniqueName('mirror')
  await withAdmin(source, admin => admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: String(COMMITTED) }] }))
  const writeTarget = async (offsets: readonly number[]): Promise<string> => {
    const targetTopic = await createTopic(t, target, { configs: KEEP })
    const messages: Message[] = offsets
      .map(o => records[o]!)
      .map(r => ({ partition: 0, key: r.key, value: r.value, timestamp: r.timestamp, headers: { ...r.headers } as Message['headers'] }))
    await produce(target, targetTopic, messages)
    return targetTopic
  }
  const verify = async (targetTopic: string, format: 'json' | 'table', extra: string[] = []) =>
    await runMirrorCheck([
      'verify',
      '--source',
      source.bootstrap,
      '--target',
      target.bootstrap,
      '--topic',
      topic,
      '--target-topic',
      targetTopic,
      '--group',
      group,
      '--format',
      format,
      ...extra,
    ])
  return { group, writeTarget, verify }
}

const range = (from: number, until: number): number[] => Array.from({ length: until - from }, (_, i) => from + i)

test(
  "verify names the range it checked and reports the target's copies beyond the mirror's committed position: uncommitted copies alone pass",
  { timeout: 120_000 },
  async t => {
    const env = await setup(t)
    const targetTopic = await env.writeTarget(range(0, RECORDS))
    const json = await env.verify(targetTopic, 'json')
    assert.equal(json.code, 0, json.stdout + json.stderr)
    const report = JSON.parse(json.stdout) as VerifyJson
    assert.equal(report.passed, true)
    assert.equal(report.checkedUpTo, 'committed')
    assert.equal(report.total.checked, COMMITTED)
    assert.deepEqual(report.beyondCommitted, { records: RECORDS - COMMITTED, duplicated: 0, unmatched: 0, partitions: 1 })
    const [p0] = report.partitions
    assert.equal(p0?.sourceFromOffset, 0)
    assert.equal(p0?.sourceUntilOffset, COMMITTED)
    assert.equal(p0?.beyondCommitted?.fromTargetOffset, COMMITTED)
    assert.equal(p0?.beyondCommitted?.untilTargetOffset, RECORDS)

    const table = await env.verify(targetTopic, 'table')
    assert.equal(table.code, 0, table.stdout + table.stderr)
    assert.match(table.stdout, /^PASSED: 60 records checked/m)
    assert.match(table.stdout, new RegExp(`^checked: source offsets 0\\.\\.59 of partition 0 \\(up to the committed position of group '${env.group}'\\)$`, 'm'))
    assert.match(
      table.stdout,
      /^beyond the committed position: 40 records on the target \(target 0@60\.\.99\), not compared: copies not committed yet, no duplicates among them$/m
    )
  }
)

test(
  "verify fails on duplicates among the copies beyond the mirror's committed position (a mirror that copied records 60..69 twice before committing); --allow-duplicates lets them pass, still reported",
  { timeout: 120_000 },
  async t => {
    const env = await setup(t)
    const targetTopic = await env.writeTarget([...range(0, 70), ...range(COMMITTED, RECORDS)])
    const json = await env.verify(targetTopic, 'json')
    assert.equal(json.code, 1, json.stdout + json.stderr)
    const report = JSON.parse(json.stdout) as VerifyJson
    assert.equal(report.passed, false)
    assert.equal(report.total.checked, COMMITTED)
    assert.equal(report.total.duplicated, 0, 'the compared range itself is clean')
    assert.deepEqual(report.beyondCommitted, { records: 50, duplicated: 10, unmatched: 0, partitions: 1 })
    assert.deepEqual(report.partitions[0]?.beyondCommitted?.duplicateOffsets, range(70, 80))

    const table = await env.verify(targetTopic, 'table')
    assert.equal(table.code, 1, table.stdout + table.stderr)
    assert.match(table.stdout, /^FAILED: 60 records checked/m)
    assert.match(
      table.stdout,
      /^beyond the committed position: 50 records on the target \(target 0@60\.\.109\), not compared: 10 of them duplicated \(one more copy of a source record already on the target\)$/m
    )
    assert.match(table.stdout, /^duplicated beyond the committed position: target 0@70 is one more copy of a source record already on the target$/m)

    const allowed = await env.verify(targetTopic, 'json', ['--allow-duplicates'])
    assert.equal(allowed.code, 0, allowed.stdout + allowed.stderr)
    assert.equal((JSON.parse(allowed.stdout) as VerifyJson).beyondCommitted.duplicated, 10)
  }
)

test('a copy of a compared record repeated beyond the committed position is a duplicate too', { timeout: 120_000 }, async t => {
  const env = await setup(t)
  // The mirror's copy up to 59, then 60..79 and a copy of 59 again.
  const targetTopic = await env.writeTarget([...range(0, 80), 59])
  const report = JSON.parse((await env.verify(targetTopic, 'json')).stdout) as VerifyJson
  assert.equal(report.passed, false)
  assert.deepEqual(report.beyondCommitted, { records: 21, duplicated: 1, unmatched: 0, partitions: 1 })
})

test(
  'a duplicate placed before the first compared record (target offset 0, before the copy the alignment finds) fails verify',
  { timeout: 120_000 },
  async t => {
    const env = await setup(t)
    // A copy of source record 50 written before the copy of record 0: the order aligner starts at target offset 1.
    const targetTopic = await env.writeTarget([50, ...range(0, RECORDS)])
    const json = await env.verify(targetTopic, 'json', ['--no-offset-syncs'])
    assert.equal(json.code, 1, json.stdout + json.stderr)
    const report = JSON.parse(json.stdout) as VerifyJson & { partitions: Array<{ alignment: { targetOffset: number }, targetFromOffset: number }> }
    assert.equal(report.partitions[0]?.alignment.targetOffset, 1)
    assert.equal(report.partitions[0]?.targetFromOffset, 0, 'read from the target partition start')
    assert.equal(report.total.duplicated, 1)
    assert.equal(report.total.checked, COMMITTED)
  }
)

test(
  'a record past the committed position that copies no source record fails verify unless --allow-in-flight; a PASSED line names the ranges it vouches for',
  { timeout: 120_000 },
  async t => {
    const env = await setup(t)
    const { target } = await sharedClusters()
    const targetTopic = await env.writeTarget(range(0, RECORDS))
    await produce(target, targetTopic, [{ partition: 0, key: 'not-a-copy', value: 'wrong', timestamp: String(BASE_TS + RECORDS * 10) }])
    const table = await env.verify(targetTopic, 'table')
    assert.equal(table.code, 1, table.stdout + table.stderr)
    assert.match(table.stdout, /^FAILED: 60 records checked.*; 1 records beyond the committed position match no source record$/m)
    assert.match(table.stdout, /^no source record beyond the committed position: target 0@100 matches no source record past offset 60 of partition 0$/m)
    const json = JSON.parse((await env.verify(targetTopic, 'json')).stdout) as VerifyJson
    assert.deepEqual(json.beyondCommitted, { records: 41, duplicated: 0, unmatched: 1, partitions: 1 })

    const allowed = await env.verify(targetTopic, 'table', ['--allow-in-flight'])
    assert.equal(allowed.code, 0, allowed.stdout + allowed.stderr)
    assert.match(
      allowed.stdout,
      /^PASSED: 60 records checked .*; vouches for source 0@0\.\.59 = target 0@0\.\.59; 1 records beyond the committed position match no source record \(allowed: --allow-in-flight\)$/m
    )
  }
)
