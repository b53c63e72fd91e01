import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FrameReader } from '../../../../src/kafka/wire/frame-reader.js'
import { WireFormatError } from '../../../../src/kafka/wire/wire-reader.js'

function framed (bodies: readonly Buffer[]): Buffer {
  return Buffer.concat(bodies.flatMap(body => {
    const size = Buffer.alloc(4)
    size.writeInt32BE(body.length)
    return [size, body]
  }))
}

const BODIES = [Buffer.from('first'), Buffer.alloc(0), Buffer.alloc(300, 9), Buffer.from('last frame')]

test('frames come out whole and in order however the stream is cut into chunks', () => {
  const stream = framed(BODIES)
  for (let chunkBytes = 1; chunkBytes <= stream.length; chunkBytes++) {
    const frames: Buffer[] = []
    const reader = new FrameReader(frame => frames.push(Buffer.from(frame)), 1024)
    for (let at = 0; at < stream.length; at += chunkBytes) reader.push(stream.subarray(at, at + chunkBytes))
    assert.deepEqual(frames, BODIES, `chunks of ${chunkBytes} bytes`)
  }
})

test('a frame inside one chunk is handed as a view of that chunk, not a copy', () => {
  const stream = framed(BODIES)
  const frames: Buffer[] = []
  new FrameReader(frame => frames.push(frame), 1024).push(stream)
  assert.equal(frames.length, BODIES.length)
  for (const frame of frames) assert.equal(frame.buffer, stream.buffer)
})

test('a size prefix outside 0 to the largest response is a WireFormatError', () => {
  const reader = new FrameReader(() => assert.fail('no frame expected'), 1024)
  assert.throws(() => reader.push(framed([Buffer.alloc(1025)])), WireFormatError)
  assert.throws(() => new FrameReader(() => {}, 1024).push(Buffer.from('ffffffff', 'hex')), WireFormatError)
})

/** Feeds `stream` to `reader` as a plain socket with `onread` does: each read fills at most `readBytes` of the buffer it is handed. */
function readThrough (reader: FrameReader, stream: Buffer, readBytes: number): Buffer[] {
  const handed: Buffer[] = []
  for (let at = 0; at < stream.length;) {
    const into = reader.nextBuffer()
    handed.push(into)
    const bytes = stream.copy(into, 0, at, Math.min(stream.length, at + readBytes))
    at += bytes
    reader.read(bytes)
  }
  return handed
}

test('read into the buffers the reader hands out (onread): frames whole and in order however the reads fall, never changed by later reads', () => {
  const stream = framed(BODIES)
  for (let readBytes = 1; readBytes <= stream.length; readBytes++) {
    const frames: Buffer[] = []
    const reader = new FrameReader(frame => frames.push(frame), 1024)
    readThrough(reader, stream, readBytes)
    // Kept as handed (not copied): a frame that had lain in the reused scratch would show later bytes.
    assert.deepEqual(frames, BODIES, `reads of ${readBytes} bytes`)
  }
})

test('onread: once a frame\'s size is known the rest of it is read straight into the frame\'s own buffer', () => {
  const large = Buffer.alloc(200_000, 7)
  const stream = framed([Buffer.from('small'), large])
  const frames: Buffer[] = []
  const reader = new FrameReader(frame => frames.push(frame), 1 << 20)
  const handed = readThrough(reader, stream, 65_536)
  assert.deepEqual(frames, [Buffer.from('small'), large])
  // The first read (the scratch) held both sizes and the start of the large frame; every read after it went into the frame itself.
  const direct = handed.slice(1)
  assert.ok(direct.length >= 3)
  for (const into of direct) assert.equal(into.buffer, frames[1]!.buffer, 'read into the frame, not into a buffer of its own')
})
