import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CommitWindow, evaluatePartitionStatus, type CommitPoint } from '../../../../src/sidecar/metrics/partition-status.js'

/** Commits every 10 s starting at t=0, from [offset, lag] pairs. */
function commits (...pairs: Array<[number, number]>): CommitPoint[] {
  return pairs.map(([offset, lag], i) => ({ offset: BigInt(offset), lagRecords: BigInt(lag), atMs: i * 10_000 }))
}
const justAfterLast = (window: CommitPoint[]): number => (window[window.length - 1]?.atMs ?? 0) + 1_000

test('ok when offsets move and lag decreases', () => {
  const window = commits([100, 50], [120, 40], [140, 30])
  assert.equal(evaluatePartitionStatus(window, 30n, justAfterLast(window)), 'ok')
})

test('ok when caught up now, whatever the window says', () => {
  const window = commits([100, 50], [100, 50], [100, 50])
  assert.equal(evaluatePartitionStatus(window, 0n, justAfterLast(window)), 'ok')
})

test('ok when any commit in the window had zero lag', () => {
  const window = commits([100, 0], [100, 5], [100, 9])
  assert.equal(evaluatePartitionStatus(window, 9n, justAfterLast(window)), 'ok')
})

test('ok with fewer than two commits: not enough to judge', () => {
  assert.equal(evaluatePartitionStatus([], 10n, 1_000), 'ok')
  assert.equal(evaluatePartitionStatus(commits([5, 10]), 10n, 1_000_000), 'ok')
})

test('rewind when an offset goes backwards, before any other rule', () => {
  const window = commits([100, 10], [120, 10], [90, 40])
  assert.equal(evaluatePartitionStatus(window, 40n, 10_000_000), 'rewind')
})

test('stop when the last commit is older than the window spans', () => {
  const window = commits([100, 50], [120, 40], [140, 30])
  assert.equal(evaluatePartitionStatus(window, 30n, 20_000 + 20_000), 'ok', 'exactly the span: not yet stopped')
  assert.equal(evaluatePartitionStatus(window, 30n, 20_000 + 20_001), 'stop')
})

test('stall when the offset never moves while lagging', () => {
  const window = commits([100, 50], [100, 60], [100, 60])
  assert.equal(evaluatePartitionStatus(window, 60n, justAfterLast(window)), 'stall')
})

test('warn when offsets move but lag never decreases', () => {
  const window = commits([100, 50], [110, 50], [120, 70])
  assert.equal(evaluatePartitionStatus(window, 70n, justAfterLast(window)), 'warn')
})

test('the commit window keeps only the most recent commits', () => {
  const window = new CommitWindow(3)
  for (const point of commits([1, 9], [2, 8], [3, 7], [4, 6])) window.add(point)
  assert.deepEqual(window.points.map(point => point.offset), [2n, 3n, 4n])
})
