import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import net from 'node:net'
import { test } from 'node:test'

const require = createRequire(import.meta.url)

interface FrameReader {
  readonly scratch: Buffer
  readonly busy: boolean
  nextBuffer: () => Buffer
  read: (bytes: number) => void
}
const FrameReader = require('@kafka-mirror-sidecar/kafkajs/src/network/frameReader') as new (
  deliver: (frame: Buffer) => void,
  fail: (error: Error) => void
) => FrameReader
const socketFactory = require('@kafka-mirror-sidecar/kafkajs/src/network/socketFactory') as () => (options: object) => net.Socket

/** A response as the broker sends it: its size, then correlation id and payload. */
function response (correlationId: number, payloadBytes: number): Buffer {
  const bytes = Buffer.alloc(8 + payloadBytes)
  bytes.writeInt32BE(4 + payloadBytes, 0)
  bytes.writeInt32BE(correlationId, 4)
  for (let i = 0; i < payloadBytes; i++) bytes[8 + i] = (correlationId + i) & 0xff
  return bytes
}

/** Plays `stream` into `reader` as a socket would: each read fills at most `chunk(n)` bytes of the buffer it hands out. */
function play (reader: FrameReader, stream: Buffer, chunk: (n: number) => number): void {
  let offset = 0
  for (let n = 0; offset < stream.length; n++) {
    const into = reader.nextBuffer()
    const bytes = Math.min(into.length, chunk(n), stream.length - offset)
    stream.copy(into, 0, offset, offset + bytes)
    offset += bytes
    reader.read(bytes)
  }
}

test('responses split anywhere, several in one read, and larger than a read each arrive whole, in order', () => {
  const sizes = [0, 1, 3, 200, 70_000, 5, 300_000, 17]
  const stream = Buffer.concat(sizes.map((size, i) => response(i + 1, size)))
  for (const chunk of [() => 1, () => 3, () => 7, () => 1000, () => 65_536, (n: number) => (n * 7919) % 5000 + 1]) {
    const frames: Buffer[] = []
    const reader = new FrameReader(frame => frames.push(frame), error => assert.fail(error))
    play(reader, stream, chunk)
    assert.equal(reader.busy, false, 'nothing left half read')
    assert.deepEqual(frames.map(frame => frame.readInt32BE(0)), sizes.map((_, i) => i + 1), 'every response, in order')
    frames.forEach((frame, i) => assert.deepEqual(frame, response(i + 1, sizes[i] as number).subarray(4), `response ${i + 1} byte for byte`))
  }
})

test('the rest of a response is read into its own buffer, not through the scratch', () => {
  const frames: Buffer[] = []
  const reader = new FrameReader(frame => frames.push(frame), error => assert.fail(error))
  const first = reader.nextBuffer()
  assert.equal(first, reader.scratch, 'between responses the scratch takes the read')
  const stream = response(9, 200_000)
  stream.copy(first, 0, 0, 1000)
  reader.read(1000)
  const rest = reader.nextBuffer()
  assert.notEqual(rest.buffer, reader.scratch.buffer, 'the rest goes straight into the response')
  assert.equal(rest.length, stream.length - 1000, 'exactly the bytes still missing')
  stream.copy(rest, 0, 1000)
  reader.read(rest.length)
  assert.equal(frames.length, 1)
  assert.equal(frames[0]?.buffer, rest.buffer, 'the response delivered is the buffer the socket read into')
  assert.deepEqual(frames[0], stream.subarray(4))
})

test('a size below a correlation id fails the connection instead of reading on', () => {
  const errors: Error[] = []
  const reader = new FrameReader(() => assert.fail('nothing to deliver'), error => errors.push(error))
  const bad = Buffer.from([0, 0, 0, 2, 1, 2])
  play(reader, bad, () => 6)
  assert.match(errors[0]?.message ?? '', /Invalid response size 2/)
})

test('a size over 64 MiB is collected as it arrives (never allocated off the size alone) and delivered whole', () => {
  const frames: Buffer[] = []
  const reader = new FrameReader(frame => frames.push(frame), error => assert.fail(error))
  // An HTTP answer read as a size: 0x48545450 ("HTTP"), over a gigabyte; 5 bytes arrive, nothing more.
  play(reader, Buffer.from('HTTP/', 'latin1'), () => 5)
  assert.equal(reader.busy, true, 'waiting for the rest')
  assert.equal(reader.nextBuffer(), reader.scratch, 'reads keep going through the scratch, no buffer of that size')
  assert.equal(frames.length, 0)

  const big = response(3, 70 * 1024 * 1024)
  const after = response(4, 10)
  const again = new FrameReader(frame => frames.push(frame), error => assert.fail(error))
  play(again, Buffer.concat([big, after]), () => 65_536)
  assert.deepEqual(frames.map(frame => frame.readInt32BE(0)), [3, 4])
  assert.ok(frames[0]?.equals(big.subarray(4)), 'the large response byte for byte')
  assert.ok(frames[1]?.equals(after.subarray(4)), 'and the one after it')
})

test('the socket factory hands onread to a plain socket: responses from a real socket arrive through the reader, no data events', async () => {
  const sizes = [10, 150_000, 3, 1_000_000, 0]
  const stream = Buffer.concat(sizes.map((size, i) => response(i + 1, size)))
  const server = net.createServer(socket => {
    // Written in uneven pieces, with pauses between, so reads split responses in many places.
    let offset = 0
    const next = (): void => {
      if (offset >= stream.length) return void socket.end()
      const piece = stream.subarray(offset, offset + 1 + ((offset * 31) % 90_000))
      offset += piece.length
      socket.write(piece, () => setImmediate(next))
    }
    next()
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as net.AddressInfo
  const frames: Buffer[] = []
  const reader = new FrameReader(frame => frames.push(frame), error => assert.fail(error))
  let dataEvents = 0
  const socket = socketFactory()({
    host: '127.0.0.1',
    port,
    onConnect: () => {},
    onread: { buffer: () => reader.nextBuffer(), callback: (bytes: number) => reader.read(bytes) },
  })
  socket.on('data', () => dataEvents++)
  await once(socket, 'end')
  socket.destroy()
  server.close()
  assert.equal(dataEvents, 0)
  assert.deepEqual(frames.map(frame => frame.length), sizes.map(size => 4 + size))
  frames.forEach((frame, i) => assert.deepEqual(frame, response(i + 1, sizes[i] as number).subarray(4)))
})
