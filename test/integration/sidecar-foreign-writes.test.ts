import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { createTopic, produce, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)
const FOREIGN = 'kafka_mirror_foreign_records_total'
/** The loss check's interval for a flow of a few partitions (`lossCheckIntervalMs`). */
const CHECK_INTERVAL_MS = 5_000

const TITLE = "3 records kcat writes into a mirrored target topic are counted as foreign within one check interval; the mirror's own writes never are"
test(TITLE, { timeout: 120_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source)
  await createTopic(t, target, { name: topic })
  await produce(source, topic, Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })))
  const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('mirror'), include: topic })
  await waitMirroring(sidecar)
  const port = await sidecarHttpPort(sidecar)
  await waitUntil(async () => (await totalRecords(target, topic)) === 20n, { timeoutMs: 60_000, message: 'the copy of 20 records' })
  assert.equal(sampleSum(await scrape(port), FOREIGN) ?? 0, 0)

  const kcat = execFileAsync('kcat', ['-P', '-b', target.bootstrap, '-t', topic, '-p', '0'])
  kcat.child.stdin?.end('stray-1\nstray-2\nstray-3\n')
  await kcat
  const written = Date.now()
  await waitUntil(async () => sampleSum(await scrape(port), FOREIGN) === 3, { timeoutMs: 3 * CHECK_INTERVAL_MS, message: '3 foreign records counted' })
  const elapsed = Date.now() - written
  t.diagnostic(`counted ${elapsed} ms after the kcat write`)
  assert.ok(elapsed <= CHECK_INTERVAL_MS + 2_000, `counted within one check interval (${elapsed} ms)`)
  assert.match(sidecar.stderr(), new RegExp(`foreign records on the target: ${topic}-0 offsets 20\\.\\.22 \\(3\\) were not written by the mirror`))

  // The mirror writes again: its own records are not foreign.
  await produce(source, topic, Array.from({ length: 10 }, (_, i) => ({ key: `k${20 + i}`, value: `v${20 + i}` })))
  await waitUntil(async () => (await totalRecords(target, topic)) === 33n, { timeoutMs: 60_000, message: 'the copy of 10 more records' })
  const checkedAfter = Date.now()
  await waitUntil(() => Date.now() - checkedAfter > CHECK_INTERVAL_MS * 2, { timeoutMs: 3 * CHECK_INTERVAL_MS, intervalMs: 500, message: 'two more checks' })
  assert.equal(sampleSum(await scrape(port), FOREIGN), 3)
})
