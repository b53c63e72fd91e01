import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { spawnMirrorCheck, type MirrorCheckProcess } from '../helpers/mirror-check.js'
import { commitAsAdmin } from '../helpers/offsets.js'
import { waitUntil } from '../helpers/wait.js'

interface GroupReport {
  group: string
  partitions: Array<{ partition: number, currentOffset: number, logEndOffset: number, lag: number }>
  totals: Array<{ lag: number }>
}

/** The complete reports printed so far: to a pipe, `--watch` prints each refresh followed by a blank line. */
function reports (watch: MirrorCheckProcess): GroupReport[][] {
  return watch.stdout().split('\n\n').filter(doc => doc.trim() !== '' && doc.trimEnd().endsWith(']')).map(doc => JSON.parse(doc) as GroupReport[])
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`offsets --watch refreshes until ${signal}, shows new lag, and exits with the last refresh's result`, { timeout: 30_000 }, async t => {
    const { source } = await sharedClusters()
    const topic = await createTopic(t, source)
    const group = uniqueName('watched')
    await produce(source, topic, Array.from({ length: 10 }, (_, i) => ({ value: `v${i}` })))
    await commitAsAdmin(source, group, topic, new Map([[0, 2n]]))

    const watch = spawnMirrorCheck(t, ['--bootstrap-server', source.bootstrap, '--group', group, '--watch', '0.3', '--max-lag', '5', '--format', 'json'])
    await waitUntil(() => reports(watch).length >= 2 || watch.child.exitCode !== null, { timeoutMs: 15_000, message: 'two refreshes' })
    assert.equal(watch.child.exitCode, null, `still running: ${watch.stderr()}`)
    for (const report of reports(watch)) {
      assert.deepEqual(report[0]!.partitions.map(p => [p.currentOffset, p.logEndOffset, p.lag]), [[2, 10, 8]])
    }
    assert.match(watch.stderr(), /lag check failed: .*lag 8 records > 5/)

    // The group moves on between refreshes: a later refresh shows the new lag without restarting.
    await commitAsAdmin(source, group, topic, new Map([[0, 7n]]))
    await waitUntil(() => reports(watch).some(r => r[0]!.partitions[0]!.lag === 3), { timeoutMs: 15_000, message: 'a refresh with lag 3' })
    const seen = reports(watch).map(r => r[0]!.totals[0]!.lag)
    assert.deepEqual([...new Set(seen)], [8, 3], `lag per refresh: ${seen.join(',')}`)
    // A refresh after the change: the last one passes --max-lag 5.
    await waitUntil(() => reports(watch).filter(r => r[0]!.partitions[0]!.lag === 3).length >= 2, { timeoutMs: 15_000, message: 'a second refresh with lag 3' })

    watch.child.kill(signal)
    const exit = await watch.exited
    assert.deepEqual(exit, { code: 0, signal: null }, `exits by itself with the last refresh's result (0: lag 3 <= 5): ${watch.stderr()}`)
    assert.ok(watch.stdout().endsWith('\n'), 'the last report is complete')
    assert.doesNotMatch(watch.stderr(), /unexpected error|^\s+at /m)
  })
}

test('offsets --watch exits 1 on a signal when the last refresh failed the lag check', { timeout: 30_000 }, async t => {
  const { source } = await sharedClusters()
  const topic = await createTopic(t, source)
  const group = uniqueName('watched')
  await produce(source, topic, Array.from({ length: 10 }, (_, i) => ({ value: `v${i}` })))
  await commitAsAdmin(source, group, topic, new Map([[0, 1n]]))

  const watch = spawnMirrorCheck(t, ['--bootstrap-server', source.bootstrap, '--group', group, '--watch', '0.3', '--max-lag', '5', '--format', 'json'])
  await waitUntil(() => reports(watch).length >= 2 || watch.child.exitCode !== null, { timeoutMs: 15_000, message: 'two refreshes' })
  watch.child.kill('SIGTERM')
  assert.deepEqual(await watch.exited, { code: 1, signal: null }, watch.stderr())
})
