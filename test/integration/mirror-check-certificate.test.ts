import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import {
  committedOffsets,
  createTopic,
  deleteTopicIfExists,
  endOffsets,
  produce,
  readAll,
  sharedClusters,
  uniqueName,
  withAdmin,
} from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

interface CertificateJson {
  valid: boolean
  signatureValid: boolean
  problem: string | null
  targetChecked: boolean
  payload: { source: { clusterId: string }, target: { clusterId: string, bootstrapServers: string[] } } | null
  ranges: Array<{
    partition: number
    sourceFromOffset: number
    sourceUntilOffset: number
    targetFromOffset: number
    targetUntilOffset: number
    records: number
    result: string
    problem: string | null
  }>
}

const PER_PARTITION = 100

const TITLE =
  'verify --certificate writes a signed certificate of a sidecar copy; certificate checks it, and fails on one changed byte a changed or a deleted target record'

test(TITLE, { timeout: 120_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('certificate'), partitions: 2 })
  t.after(() => deleteTopicIfExists(target, topic))
  const now = Date.now()
  const messages: Message[] = Array.from({ length: 2 * PER_PARTITION }, (_, i) => ({
    partition: i % 2,
    key: `k${i}`,
    value: `value ${i}`,
    timestamp: String(now + i),
    headers: { trace: `t${i}` },
  }))
  await produce(source, topic, messages)
  const group = uniqueName('mirror')
  const sidecar = spawnSidecar(t, { source, target, groupId: group, include: topic })
  await waitMirroring(sidecar)
  await waitUntil(async () => {
    const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, group, topic)])
    return [...ends].every(([p, end]) => committed.get(p) === end)
  }, { timeoutMs: 60_000, message: 'the mirror to commit the source end offsets' })
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr())

  const dir = mkdtempSync(join(tmpdir(), 'certificate-'))
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const signingKey = join(dir, 'signing.pem')
  const publicKeyFile = join(dir, 'signing.pub')
  writeFileSync(signingKey, privateKey.export({ type: 'pkcs8', format: 'pem' }))
  writeFileSync(publicKeyFile, publicKey.export({ type: 'spki', format: 'pem' }))
  const file = join(dir, 'copy.cert.json')

  // A certificate without its key is one usage line, before anything connects.
  const noKey = await runMirrorCheck(['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--certificate', file])
  assert.equal(noKey.code, 2)
  assert.match(noKey.stderr, /^mirror-check: --certificate ".*copy.cert.json" needs --signing-key KEY/)

  const verified = await runMirrorCheck(
    ['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--group', group]
      .concat(['--certificate', file, '--signing-key', signingKey]),
    { timeoutMs: 60_000 }
  )
  assert.equal(verified.code, 0, verified.stdout + verified.stderr)
  assert.match(verified.stderr, /certificate written to .*copy\.cert\.json: 200 target records in 2 partition ranges/)

  const check = async (certificate: string, extra: string[] = ['--target', target.bootstrap]): Promise<{ code: number, json: CertificateJson }> => {
    const result = await runMirrorCheck(['certificate', certificate, '--public-key', publicKeyFile, '--format', 'json', ...extra], { timeoutMs: 60_000 })
    assert.ok(result.stdout.startsWith('{'), result.stdout + result.stderr)
    return { code: result.code, json: JSON.parse(result.stdout) as CertificateJson }
  }
  const good = await check(file)
  assert.equal(good.code, 0)
  assert.equal(good.json.valid, true)
  assert.equal(good.json.targetChecked, true)
  assert.deepEqual(good.json.payload?.target.bootstrapServers, [target.bootstrap])
  assert.notEqual(good.json.payload?.source.clusterId, good.json.payload?.target.clusterId)
  assert.deepEqual(
    good.json.ranges.map(r => [r.partition, r.sourceFromOffset, r.sourceUntilOffset, r.targetFromOffset, r.targetUntilOffset, r.records, r.result]),
    [[0, 0, PER_PARTITION, 0, PER_PARTITION, PER_PARTITION, 'ok'], [1, 0, PER_PARTITION, 0, PER_PARTITION, PER_PARTITION, 'ok']]
  )
  const signatureOnly = await check(file, [])
  assert.equal(signatureOnly.code, 0)
  assert.deepEqual(signatureOnly.json.ranges.map(r => r.result), ['not-checked', 'not-checked'])

  // One byte of the file changed: a digit of partition 1's record count.
  const text = readFileSync(file, 'utf8')
  const at = text.lastIndexOf(`"records":${PER_PARTITION}`) + '"records":'.length
  const tampered = join(dir, 'tampered.cert.json')
  writeFileSync(tampered, text.slice(0, at) + '2' + text.slice(at + 1))
  const altered = await check(tampered)
  assert.equal(altered.code, 1)
  assert.equal(altered.json.signatureValid, false)
  assert.match(altered.json.problem ?? '', /altered/)

  // The target topic re-created behind the mirror's back with one value of partition 1 changed: that range's digest differs.
  const copy = await readAll(target, topic)
  assert.equal(copy.length, 2 * PER_PARTITION)
  await deleteTopicIfExists(target, topic)
  await waitUntil(async () => !(await withAdmin(target, admin => admin.listTopics())).includes(topic), { message: 'the target topic to be deleted' })
  await withAdmin(target, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2, replicationFactor: 1 }] }))
  for (const partition of [0, 1]) {
    await produce(target, topic, copy.filter(r => r.partition === partition).map((r, i) => ({
      partition,
      key: r.key,
      value: partition === 1 && i === 50 ? Buffer.from('value changed') : r.value,
      timestamp: r.timestamp,
      headers: r.headers,
    })))
  }
  const changed = await check(file)
  assert.equal(changed.code, 1)
  assert.equal(changed.json.signatureValid, true)
  assert.deepEqual(changed.json.ranges.map(r => [r.partition, r.result]), [[0, 'ok'], [1, 'failed']])
  assert.match(changed.json.ranges[1]?.problem ?? '', /SHA-256 of the target records differs/)

  // The target loses its first record of partition 0: that range fails too.
  await withAdmin(target, async admin => {
    await admin.fetchTopicMetadata({ topics: [topic] })
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '1' }] })
  })
  const deleted = await check(file)
  assert.equal(deleted.code, 1)
  assert.equal(deleted.json.signatureValid, true)
  assert.deepEqual(deleted.json.ranges.map(r => [r.partition, r.result]), [[0, 'failed'], [1, 'failed']])
  assert.match(deleted.json.ranges[0]?.problem ?? '', /target offsets 0\.\.0 are deleted/)
})
