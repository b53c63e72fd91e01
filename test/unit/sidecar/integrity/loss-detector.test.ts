import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LossDetector, type PartitionObservation } from '../../../../src/sidecar/integrity/loss-detector.js'

function observe (over: Partial<PartitionObservation> = {}): PartitionObservation {
  return {
    topic: 'orders',
    partition: 0,
    source: { logStartOffset: 0n, highWatermark: 1000n },
    target: { logStartOffset: 0n, highWatermark: 1000n },
    nextOffsetToMirror: 0n,
    nextOffsetToMirrorBefore: over.nextOffsetToMirror ?? 0n,
    idle: true,
    consumerHighWatermark: 1000n,
    ...over,
  }
}

function ack (detector: LossDetector, first: bigint, next: bigint, targetBase: bigint): void {
  detector.acknowledged('orders', 0, 'orders', first, next, [{ targetBaseOffset: targetBase, count: Number(next - first) }])
}

/** A check whose log offsets were read right after the mark (nothing acknowledged in between). */
function check (detector: LossDetector, observations: PartitionObservation[]): ReturnType<LossDetector['check']> {
  return detector.check(observations, detector.mark())
}

function summary (findings: ReturnType<LossDetector['check']>): string[] {
  return findings.map(f => `${f.reason} ${f.fromOffset}-${f.toOffset} ${f.records}`)
}

test('a gap between acknowledged batches is lost only as far as the log start passed it; each offset is counted once', () => {
  const detector = new LossDetector()
  ack(detector, 0n, 100n, 0n)
  assert.deepEqual(summary(check(detector, [observe({ nextOffsetToMirror: 100n, committedBeforeStart: null })])), [])
  ack(detector, 300n, 400n, 100n) // the consumer was reset past 100..299
  assert.deepEqual(
    summary(check(detector, [observe({ source: { logStartOffset: 250n, highWatermark: 1000n }, nextOffsetToMirror: 400n })])),
    ['source_retention 100-250 150'],
    'offsets 250..299 still exist on the source: skipped by something else (compaction), not by retention')
  assert.deepEqual(
    summary(check(detector, [observe({ source: { logStartOffset: 300n, highWatermark: 1000n }, nextOffsetToMirror: 400n })])),
    [],
    'a gap is judged once'
  )
})

test('an idle mirror below the log start has lost the difference; records in flight are never counted', () => {
  const detector = new LossDetector()
  ack(detector, 0n, 100n, 0n)
  check(detector, [observe({ nextOffsetToMirror: 100n, committedBeforeStart: null })])
  assert.deepEqual(
    summary(check(detector, [observe({ source: { logStartOffset: 180n, highWatermark: 1000n }, nextOffsetToMirror: 100n, idle: false })])),
    [],
    'fetched records are on their way'
  )
  assert.deepEqual(summary(check(detector, [observe({ source: { logStartOffset: 180n, highWatermark: 1000n }, nextOffsetToMirror: 100n })])), [
    'source_retention 100-180 80',
  ])
  ack(detector, 180n, 200n, 100n)
  assert.deepEqual(
    summary(check(detector, [observe({ source: { logStartOffset: 180n, highWatermark: 1000n }, nextOffsetToMirror: 200n })])),
    [],
    'the gap 100..179 the reset left was counted already'
  )
})

test('the first batch of a partition is compared with the group\'s committed offset before this process', () => {
  const detector = new LossDetector()
  ack(detector, 150n, 200n, 100n)
  assert.deepEqual(detector.needsCommittedOffset(), [{ topic: 'orders', partition: 0 }])
  assert.equal(detector.needsCheckBeforeCommit(), true)
  assert.deepEqual(
    summary(check(detector, [observe({ source: { logStartOffset: 150n, highWatermark: 200n }, nextOffsetToMirror: 200n, committedBeforeStart: 100n })])),
    ['source_retention 100-150 50']
  )
  assert.deepEqual(detector.needsCommittedOffset(), [])
  assert.equal(detector.needsCheckBeforeCommit(), false)
})

test('a source high watermark below the mirror\'s position is a recreated topic, reported once with the records the consumer had seen', () => {
  const detector = new LossDetector()
  ack(detector, 0n, 100n, 0n)
  check(detector, [
    observe({ nextOffsetToMirror: 100n, committedBeforeStart: null, consumerHighWatermark: 120n, source: { logStartOffset: 0n, highWatermark: 120n } }),
  ])
  assert.deepEqual(summary(check(detector, [observe({ nextOffsetToMirror: 100n, source: { logStartOffset: 0n, highWatermark: 10n } })])), [
    'source_topic_recreated 100-120 20',
  ])
  assert.deepEqual(summary(check(detector, [observe({ nextOffsetToMirror: 100n, source: undefined })])), [])
})

test('a target that lost what the mirror wrote: gone, below the written offsets, or a lower offset acknowledged', () => {
  for (const [name, o, before] of [
    ['topic gone', observe({ nextOffsetToMirror: 100n, target: undefined }), undefined],
    ['high watermark below', observe({ nextOffsetToMirror: 100n, target: { logStartOffset: 0n, highWatermark: 3n } }), undefined],
    [
      'offsets went back',
      observe({ nextOffsetToMirror: 105n, target: { logStartOffset: 0n, highWatermark: 200n } }),
      (d: LossDetector) => ack(d, 100n, 105n, 0n),
    ],
  ] as const) {
    const detector = new LossDetector()
    ack(detector, 0n, 100n, 0n)
    check(detector, [observe({ nextOffsetToMirror: 100n, committedBeforeStart: null, target: { logStartOffset: 20n, highWatermark: 100n } })])
    before?.(detector)
    assert.deepEqual(summary(check(detector, [o])), ['target_topic_recreated 20-100 80'], name)
    assert.deepEqual(summary(check(detector, [o])), [], `${name}: reported once`)
  }
})

test('a partition this process no longer handles is forgotten: a later assignment does not look like a gap', () => {
  const detector = new LossDetector()
  ack(detector, 0n, 100n, 0n)
  check(detector, [observe({ nextOffsetToMirror: 100n, committedBeforeStart: null })])
  detector.retain([])
  ack(detector, 500n, 600n, 100n)
  assert.deepEqual(
    summary(check(detector, [observe({ source: { logStartOffset: 400n, highWatermark: 1000n }, nextOffsetToMirror: 600n, committedBeforeStart: 500n })])),
    []
  )
})

test('what the mirror acknowledges while the log offsets are read is not compared with them: a busy mirror is not a recreated topic', () => {
  const detector = new LossDetector()
  ack(detector, 0n, 100n, 0n)
  check(detector, [
    observe({
      nextOffsetToMirror: 100n,
      committedBeforeStart: null,
      source: { logStartOffset: 0n, highWatermark: 100n },
      target: { logStartOffset: 0n, highWatermark: 100n },
    }),
  ])
  const marks = detector.mark()
  ack(detector, 100n, 110n, 100n) // while the high watermarks (both 100) are read
  ack(detector, 150n, 160n, 110n) // a reset past 110..149, also while they are read
  const during = observe({
    nextOffsetToMirrorBefore: 100n,
    nextOffsetToMirror: 160n,
    source: { logStartOffset: 0n, highWatermark: 100n },
    target: { logStartOffset: 0n, highWatermark: 100n },
  })
  assert.deepEqual(summary(detector.check([during], marks)), [])
  assert.deepEqual(
    summary(
      check(detector, [
        observe({ nextOffsetToMirror: 160n, source: { logStartOffset: 150n, highWatermark: 160n }, target: { logStartOffset: 0n, highWatermark: 120n } }),
      ])
    ),
    ['source_retention 110-150 40'],
    'the gap that appeared during the last check is judged at this one, against a log start read after it'
  )
})

test('a failed check gives its gaps back to the next one', () => {
  const detector = new LossDetector()
  ack(detector, 0n, 100n, 0n)
  check(detector, [observe({ nextOffsetToMirror: 100n, committedBeforeStart: null })])
  ack(detector, 150n, 160n, 100n)
  detector.unmark(detector.mark())
  assert.deepEqual(summary(check(detector, [observe({ nextOffsetToMirror: 160n, source: { logStartOffset: 150n, highWatermark: 160n } })])), [
    'source_retention 100-150 50',
  ])
})

test('a target high watermark may trail the newest acknowledgements (acks=1) for one check, not for two', () => {
  const detector = new LossDetector()
  ack(detector, 0n, 100n, 0n)
  check(detector, [observe({ nextOffsetToMirror: 100n, committedBeforeStart: null, target: { logStartOffset: 0n, highWatermark: 100n } })])
  ack(detector, 100n, 150n, 100n)
  assert.deepEqual(summary(check(detector, [observe({ nextOffsetToMirror: 150n, target: { logStartOffset: 0n, highWatermark: 120n } })])), [])
  assert.deepEqual(summary(check(detector, [observe({ nextOffsetToMirror: 150n, target: { logStartOffset: 0n, highWatermark: 120n } })])), [
    'target_topic_recreated 0-150 150',
  ])
})

test('a partition a cluster\'s answer does not list while its topic is there (partitions just added) is judged at a later check, its gaps kept', () => {
  const detector = new LossDetector()
  ack(detector, 0n, 100n, 0n)
  check(detector, [observe({ nextOffsetToMirror: 100n, committedBeforeStart: null })])
  ack(detector, 300n, 400n, 100n) // the consumer was reset past 100..299
  assert.deepEqual(summary(check(detector, [observe({ target: undefined, unlisted: true, nextOffsetToMirror: 400n })])), [], 'not listed is not gone')
  assert.deepEqual(summary(check(detector, [observe({ source: undefined, unlisted: true, nextOffsetToMirror: 400n })])), [], 'on either cluster')
  assert.deepEqual(
    summary(check(detector, [observe({ source: { logStartOffset: 250n, highWatermark: 1000n }, nextOffsetToMirror: 400n })])),
    ['source_retention 100-250 150'],
    'the gap found while the partition was not listed is judged once it is')
})
