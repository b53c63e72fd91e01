import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

const require = createRequire(import.meta.url)
const Encoder = require('@kafka-mirror-sidecar/kafkajs/src/protocol/encoder') as new () => { writeInt64: (v: string) => { buffer: Buffer } }
const Decoder = require('@kafka-mirror-sidecar/kafkajs/src/protocol/decoder') as new (b: Buffer) => { readInt64: () => bigint, offset: number }

test('kafkajs\' decoder reads every int64 as the signed value written, and moves on by 8 bytes', () => {
  const values = [0n, 1n, -1n, -2n, 2n ** 31n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n + 7n, -(2n ** 63n), 2n ** 63n - 1n, 123_456_789_012_345n]
  for (const value of values) {
    const bytes = Buffer.concat([new Encoder().writeInt64(value.toString()).buffer, new Encoder().writeInt64('42').buffer])
    const decoder = new Decoder(bytes)
    assert.equal(decoder.readInt64(), value)
    assert.equal(decoder.offset, 8)
    assert.equal(decoder.readInt64(), 42n)
  }
})

test('kafkajs\' decoder still fails on an int64 cut short', () => {
  assert.throws(() => new Decoder(Buffer.from([0, 0, 0, 1])).readInt64())
})
