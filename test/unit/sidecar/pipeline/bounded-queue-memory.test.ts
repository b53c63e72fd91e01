import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { recordsRetain, retainedBuffers } from '../../../../src/ports/mirror-batch.js'
import { BoundedQueue } from '../../../../src/sidecar/pipeline/bounded-queue.js'

setFlagsFromString('--expose-gc')
const fullGc = runInNewContext('gc') as () => void

/** Every fetch response made, weakly: which of them something still holds. */
const responses: Array<WeakRef<ArrayBufferLike>> = []

/**
 * Bytes of the fetch responses still reachable after full collections (each collection in a turn
 * of its own: a `WeakRef` target stays alive to the end of the turn that made or read it).
 */
async function reachableResponseBytes (): Promise<number> {
  for (let i = 0; i < 2; i++) {
    await new Promise(setImmediate)
    fullGc()
  }
  let bytes = 0
  for (let i = responses.length - 1; i >= 0; i--) {
    const buffer = (responses[i] as WeakRef<ArrayBufferLike>).deref()
    if (buffer === undefined) responses.splice(i, 1)
    else bytes += buffer.byteLength
  }
  return bytes
}

const PARTITIONS = 20
const BATCH_BYTES = 16 * 1024
/** One fetch response: a batch of each partition, back to back, in one buffer (as the patched connection reads it). */
const RESPONSE_BYTES = PARTITIONS * BATCH_BYTES
const CAPACITY_BYTES = 2 * 1024 * 1024
const FETCHES = 300

interface Batch {
  readonly key: string
  readonly records: { readonly length: number }
  readonly forwarded: { readonly recordCount: number }
  readonly bytes: number
  readonly retains: readonly ArrayBufferLike[]
  readonly view: Buffer
}

/** A fetch response of `PARTITIONS` batches, each a view of it, as `KafkaForwardedBatch` holds one. */
function fetchResponse (fetch: number): Batch[] {
  const response = Buffer.allocUnsafe(RESPONSE_BYTES)
  response.fill(fetch % 256)
  responses.push(new WeakRef(response.buffer))
  return Array.from({ length: PARTITIONS }, (_, p) => {
    const view = response.subarray(p * BATCH_BYTES, (p + 1) * BATCH_BYTES)
    return { key: `p${p}`, records: { length: 0 }, forwarded: { recordCount: 10 }, bytes: BATCH_BYTES, retains: retainedBuffers([view]), view }
  })
}

/** Bytes of the distinct buffers `batches` keep alive: what holding them costs. */
function heldBytes (batches: Iterable<Batch>): number {
  const buffers = new Set<ArrayBufferLike>()
  for (const batch of batches) buffers.add(batch.view.buffer)
  let bytes = 0
  for (const buffer of buffers) bytes += buffer.byteLength
  return bytes
}

test(
  'one partition slow but moving while 19 flow: the bytes the queue holds (fetch responses whole) are what queue.bytes shows, within queue.bytes, measured after a full GC',
  { timeout: 60_000 },
  async t => {
    const queue = new BoundedQueue<Batch>(100_000, CAPACITY_BYTES, { keyOf: batch => batch.key })
    const held = new Set<Batch>()
    let peakQueueBytes = 0
    let peakMeasured = 0
    let slowAcknowledged = 0
    let othersAcknowledged = 0
    let fetching = true

    // The producers: every partition's batches are acknowledged at once but p0's, which the
    // target takes one request every 8 rounds (a slow but moving partition).
    const produce = (async () => {
      let slow: Batch[] = []
      for (let round = 0; fetching || held.size > 0; round++) {
        const taken = await queue.takeWithin(0, Number.MAX_SAFE_INTEGER, 5) ?? []
        for (const batch of taken) {
          if (batch.key === 'p0') slow.push(batch)
          else {
            queue.release(batch)
            held.delete(batch)
            othersAcknowledged++
          }
        }
        if (round % 8 === 0 || !fetching) {
          for (const batch of slow) { queue.release(batch); held.delete(batch); slowAcknowledged++ }
          slow = []
        }
        queue.checkInvariants()
        // Acknowledged: nothing here holds them any more (as a produce request's buffers go with its answer).
        taken.length = 0
        await new Promise(setImmediate)
      }
    })()

    // The fetcher: a response at a time, each batch pushed as the intake pushes it (waiting for room).
    for (let fetch = 0; fetch < FETCHES; fetch++) {
      for (const batch of fetchResponse(fetch)) {
        await queue.push(batch)
        held.add(batch)
        queue.checkInvariants()
        assert.equal(queue.bytes, heldBytes(held), 'queue.bytes is the bytes of the responses its batches keep alive')
        peakQueueBytes = Math.max(peakQueueBytes, queue.bytes)
      }
      if (fetch % 10 === 9) {
        peakMeasured = Math.max(peakMeasured, await reachableResponseBytes())
      }
    }
    fetching = false
    await produce
    queue.checkInvariants()
    assert.equal(queue.bytes, 0)

    t.diagnostic(`peak queue.bytes ${peakQueueBytes} B, peak of the fetch responses still reachable after a full GC ${peakMeasured} B, bound ${CAPACITY_BYTES} B`)
    const flowed = `p0 moved (${slowAcknowledged} batches) and the others flowed (${othersAcknowledged})`
    assert.ok(slowAcknowledged > 0 && othersAcknowledged > slowAcknowledged, flowed)
    assert.ok(peakQueueBytes <= CAPACITY_BYTES, `queue.bytes peaked at ${peakQueueBytes}`)
    // Measured: the responses the queue holds, and the one being handed over (its batches not yet pushed).
    const bound = CAPACITY_BYTES + RESPONSE_BYTES
    assert.ok(peakMeasured <= bound, `${peakMeasured} B of fetch responses held, over the bound ${bound} B`)
  }
)

test('a batch read after its acknowledgement (hold: a digest) keeps its bytes counted until the read ends; pushes wait meanwhile', async () => {
  const queue = new BoundedQueue<Batch>(100_000, RESPONSE_BYTES, { keyOf: batch => batch.key })
  const [first, second] = fetchResponse(0) as [Batch, Batch]
  await queue.push(first)
  const [taken] = await queue.take(0, Number.MAX_SAFE_INTEGER) as [Batch]
  let endDigest!: () => void
  queue.hold(taken, new Promise<void>(resolve => { endDigest = resolve }))
  queue.release(taken)
  queue.checkInvariants()
  assert.equal(queue.bytes, RESPONSE_BYTES, 'the response stays counted while the digest reads it')
  assert.equal(queue.records, 0)
  const next = fetchResponse(1)[0] as Batch
  assert.equal(await queue.pushWithin(next, undefined, 20), false, 'a batch of another response does not fit meanwhile')
  assert.equal(await queue.pushWithin(second, undefined, 20), false, 'nor one behind it in line, of the same response')
  endDigest()
  assert.equal(await queue.pushWithin(next, undefined, 1_000), true, 'admitted once the digest is done')
  queue.checkInvariants()
  assert.equal(queue.bytes, RESPONSE_BYTES)
  queue.withdraw(second)
  queue.checkInvariants()
})

test('batches of one response count it once; a batch of records decoded from it too; it stops counting with the last release', async () => {
  const queue = new BoundedQueue<Batch>(100_000, 10 * RESPONSE_BYTES, { keyOf: batch => batch.key })
  const batches = fetchResponse(0)
  for (const batch of batches.slice(0, 3)) await queue.push(batch)
  queue.checkInvariants()
  assert.equal(queue.bytes, RESPONSE_BYTES)
  // Records decoded from an uncompressed batch of it: their keys and values are views of the response too.
  const view = (batches[5] as Batch).view
  const headerList = [{ key: 'h', value: view.subarray(100, 104) }]
  const decoded = [{ offset: '0', timestamp: '0', key: view.subarray(0, 8), value: view.subarray(8, 100), headerList }]
  await queue.push({ key: 'p5', records: decoded, forwarded: { recordCount: 1 }, bytes: 104, retains: recordsRetain(decoded), view })
  queue.checkInvariants()
  assert.equal(queue.bytes, RESPONSE_BYTES, 'decoded records of the response add nothing: it is counted already')
  const small = { key: 'p9', records: { length: 1 }, forwarded: { recordCount: 1 }, bytes: 7, retains: [], view: Buffer.from('pooled!') }
  await queue.push(small)
  assert.equal(queue.bytes, RESPONSE_BYTES + 7, 'a batch that retains no large buffer counts its own bytes')
  const taken = await queue.take(0, Number.MAX_SAFE_INTEGER)
  assert.deepEqual(taken.map(batch => batch.key), ['p0', 'p1', 'p2', 'p5', 'p9'])
  const [p0, p1, p2, p5] = taken as [Batch, Batch, Batch, Batch]
  queue.release(small)
  for (const batch of [p0, p1, p5]) {
    queue.release(batch)
    queue.checkInvariants()
    assert.equal(queue.bytes, RESPONSE_BYTES, 'still held by a batch of it')
  }
  queue.release(p2)
  queue.checkInvariants()
  assert.equal(queue.bytes, 0)
})
