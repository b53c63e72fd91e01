import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { spawnSidecar } from '../helpers/sidecar.js'
import { scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

/** The value of `kafka_mirror_source_retention_seconds` for `topic`, undefined while absent. */
function retentionSeconds (exposition: string, topic: string): number | undefined {
  const line = exposition.split('\n').find(l => l.startsWith('kafka_mirror_source_retention_seconds{') && l.includes(`topic="${topic}"`))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

test("kafka_mirror_source_retention_seconds: the source topic's retention.ms, read at start and again after it changed", { timeout: 90_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { configs: { 'retention.ms': '3600000' } })
  const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('retention'), include: topic })
  const port = await sidecarHttpPort(sidecar)
  await waitUntil(async () => retentionSeconds(await scrape(port), topic) === 3600, { timeoutMs: 30_000, message: 'the retention of the topic, 3600 s' })
  await withAdmin(source, admin => admin.alterConfigs({
    validateOnly: false,
    resources: [{ type: 2, name: topic, configEntries: [{ name: 'retention.ms', value: '7200000' }] }],
  }))
  // spawnSidecar refreshes topics every second: the new value is read on a refresh.
  await waitUntil(async () => retentionSeconds(await scrape(port), topic) === 7200, { timeoutMs: 30_000, message: 'the changed retention, 7200 s' })
  assert.equal(retentionSeconds(await scrape(port), topic), 7200)
})
