import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ForeignWriteDetector } from '../../../../src/sidecar/integrity/foreign-write-detector.js'

const seen = (targetHighWatermark: bigint, idle = true) => [{ topic: 't', partition: 0, targetTopic: 't', targetHighWatermark, idle }]
const run = (targetBaseOffset: bigint, count: number) => [{ targetBaseOffset, count }]

test('records between and after the mirror\'s writes are foreign once the partition is idle; each offset is judged once', () => {
  const detector = new ForeignWriteDetector()
  detector.acknowledged('t', 0, 't', run(100n, 10))
  detector.acknowledged('t', 0, 't', run(113n, 5))
  assert.deepEqual(detector.check(seen(120n, false)), [], 'nothing judged while records are in flight')
  assert.deepEqual(detector.check(seen(120n)).map(f => [f.fromOffset, f.toOffset, f.records]), [[110n, 113n, 3n], [118n, 120n, 2n]])
  assert.deepEqual(detector.check(seen(120n)), [])
  detector.acknowledged('t', 0, 't', run(120n, 4))
  assert.deepEqual(detector.check(seen(124n)), [], 'the mirror\'s own writes are not foreign')
})

test('offsets before the first write of this process are not judged, and a partition given up is forgotten', () => {
  const detector = new ForeignWriteDetector()
  assert.deepEqual(detector.check(seen(50n)), [])
  detector.acknowledged('t', 0, 't', run(50n, 2))
  assert.deepEqual(detector.check(seen(52n)), [])
  detector.retain([])
  assert.deepEqual(detector.check(seen(60n)), [], 'another process writes the partition now')
})
