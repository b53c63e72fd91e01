import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { deleteTopicIfExists, produce, sharedClusters, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)

const TOPICS = 60
const PARTITIONS = 8
const PER_PARTITION = 20

/** Every key on `topic` of `cluster`, read with kcat (an independent client). */
async function kcatKeys (bootstrap: string, topic: string): Promise<Array<{ key: string, at: string }>> {
  const { stdout } = await execFileAsync('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%k %p:%o\n'], {
    maxBuffer: 16 * 1024 * 1024,
  })
  return stdout.split('\n').filter(line => line !== '').map(line => { const [key = '', at = ''] = line.split(' '); return { key, at } })
}

test('many target topics created at start and written at once: every record once, offsets committed on every partition', { timeout: 240_000 }, async t => {
  const { source, target } = await sharedClusters()
  const prefix = uniqueName('fresh')
  const topics = Array.from({ length: TOPICS }, (_, i) => `${prefix}-${i}`)
  await withAdmin(source, admin =>
    admin.createTopics({ waitForLeaders: true, topics: topics.map(topic => ({ topic, numPartitions: PARTITIONS, replicationFactor: 1 })) })
  )
  t.after(async () => {
    for (const topic of topics) {
      await deleteTopicIfExists(source, topic)
      await deleteTopicIfExists(target, topic)
    }
  })
  for (const topic of topics) {
    await produce(
      source,
      topic,
      Array.from({ length: PARTITIONS * PER_PARTITION }, (_, i) => ({ partition: i % PARTITIONS, key: `${topic}/${i}`, value: `v${i}` }))
    )
  }
  for (const topic of topics) assert.equal(await totalRecords(source, topic), BigInt(PARTITIONS * PER_PARTITION), `${topic} on the source: each record once`)
  // The target topics do not exist yet: the mirror creates all of them and writes to them at once,
  // while their leaders are still settling (the produce requests of a lane span many partitions).
  const groupId = uniqueName('fresh-mirror')
  const sidecar = spawnSidecar(t, { source, target, groupId, include: `${prefix}-.*`, args: ['--offset.commit.interval.ms', '1000'] })
  await waitMirroring(sidecar)
  await waitUntil(async () => {
    for (const topic of topics) if (await totalRecords(target, topic).catch(() => 0n) < BigInt(PARTITIONS * PER_PARTITION)) return false
    return true
  }, { timeoutMs: 120_000, intervalMs: 500, message: 'every topic copied' })

  let duplicates = 0
  let missing = 0
  const examples: string[] = []
  for (const topic of topics) {
    const read = await kcatKeys(target.bootstrap, topic)
    const seen = new Map<string, string>()
    for (const { key, at } of read) {
      const first = seen.get(key)
      if (first !== undefined && examples.length < 5) examples.push(`${key} at ${first} and ${at}`)
      if (first === undefined) seen.set(key, at)
    }
    duplicates += read.length - seen.size
    for (let i = 0; i < PARTITIONS * PER_PARTITION; i++) if (!seen.has(`${topic}/${i}`)) missing++
  }
  const retried = sidecar
    .stderr()
    .split('\n')
    .filter(line => line.includes('"msg":"writing to the target failed; retrying"'))
    .map(line => (JSON.parse(line) as { code?: string }).code)
  t.diagnostic(`${TOPICS * PARTITIONS} partitions: ${duplicates} duplicates, ${missing} missing; produce retries: ${retried.join(', ') || 'none'}; ${examples.join('; ')}`)
  assert.deepEqual({ duplicates, missing }, { duplicates: 0, missing: 0 })

  await waitUntil(async () => {
    const offsets = await withAdmin(source, admin => admin.fetchOffsets({ groupId, topics }))
    return offsets.every(topic => topic.partitions.length === PARTITIONS && topic.partitions.every(p => p.offset === String(PER_PARTITION)))
  }, { timeoutMs: 30_000, intervalMs: 500, message: 'source offsets committed on every partition' })
})
