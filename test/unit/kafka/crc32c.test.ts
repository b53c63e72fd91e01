import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { crc32c, crc32cImplementation, crc32cJs, loadCrc32c } from '../../../src/kafka/crc32c.js'

test('CRC-32C: the check value of "123456789" is 0xE3069283, natively and in JavaScript', () => {
  assert.equal(crc32cImplementation, 'native', 'this platform (linux x64 glibc) has the prebuilt binary')
  assert.equal(crc32c(Buffer.from('123456789')), 0xE3069283)
  assert.equal(crc32cJs(Buffer.from('123456789')), 0xE3069283)
  assert.equal(crc32c(Buffer.alloc(0)), 0)
  assert.equal(crc32cJs(Buffer.alloc(0)), 0)
})

test('CRC-32C: native and JavaScript agree on every length around the 8-byte steps, and continue from an initial CRC alike', () => {
  const bytes = randomBytes(4096 + 13)
  for (let length = 0; length <= 40; length++) assert.equal(crc32c(bytes.subarray(0, length)), crc32cJs(bytes.subarray(0, length)), `length ${length}`)
  assert.equal(crc32c(bytes), crc32cJs(bytes))
  for (const cut of [0, 1, 7, 8, 1000, bytes.length]) {
    const whole = crc32cJs(bytes)
    assert.equal(crc32c(bytes.subarray(cut), crc32c(bytes.subarray(0, cut))), whole, `native, cut at ${cut}`)
    assert.equal(crc32cJs(bytes.subarray(cut), crc32cJs(bytes.subarray(0, cut))), whole, `JavaScript, cut at ${cut}`)
  }
  assert.ok(crc32c(Buffer.from([0xff, 0xff, 0xff, 0xff])) > 0x7fffffff, 'an unsigned number')
})

test('CRC-32C: without the native module the JavaScript one is used', () => {
  const requested: string[] = []
  const loaded = loadCrc32c(name => { requested.push(name); throw new Error(`Cannot find module '${name}'`) })
  assert.deepEqual(requested, ['@node-rs/crc32'])
  assert.equal(loaded.implementation, 'javascript')
  assert.equal(loaded.crc32c, crc32cJs)
})
