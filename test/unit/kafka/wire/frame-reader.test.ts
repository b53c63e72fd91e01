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
