import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { crc32cJs } from '../../../src/kafka/crc32c.js'
import { crc32cCombine, crc32cPrefixReplaced } from '../../../src/kafka/crc32c-combine.js'

const LENGTHS = [0, 1, 7, 8, 61, 255, 4096, 65_537, 1_048_576 + 3]

test('the CRC-32C of two messages joined, from their CRCs and the second one\'s length, is the CRC of the joined bytes', () => {
  for (const lengthA of [0, 1, 40]) {
    for (const lengthB of LENGTHS) {
      const a = randomBytes(lengthA)
      const b = randomBytes(lengthB)
      assert.equal(crc32cCombine(crc32cJs(a), crc32cJs(b), lengthB), crc32cJs(Buffer.concat([a, b])), `${lengthA} + ${lengthB} bytes`)
    }
  }
})

test('replacing the first bytes of a message: the new CRC-32C from the old one and the two prefixes, without reading the rest', () => {
  for (const length of LENGTHS) {
    const prefix = randomBytes(40)
    const newPrefix = randomBytes(40)
    const rest = randomBytes(length)
    const before = crc32cJs(Buffer.concat([prefix, rest]))
    assert.equal(
      crc32cPrefixReplaced(before, crc32cJs(prefix), crc32cJs(newPrefix), length),
      crc32cJs(Buffer.concat([newPrefix, rest])),
      `40-byte prefix before ${length} bytes`
    )
  }
  const same = randomBytes(40)
  const rest = randomBytes(100)
  const crc = crc32cJs(Buffer.concat([same, rest]))
  assert.equal(crc32cPrefixReplaced(crc, crc32cJs(same), crc32cJs(same), 100), crc, 'the same prefix keeps the CRC')
})

test('a CRC carried over from a message whose rest changed no longer matches it: the change is still caught', () => {
  const prefix = randomBytes(40)
  const newPrefix = randomBytes(40)
  const rest = randomBytes(5000)
  const before = crc32cJs(Buffer.concat([prefix, rest]))
  rest[1234] = (rest[1234] as number) ^ 0x01
  assert.notEqual(crc32cPrefixReplaced(before, crc32cJs(prefix), crc32cJs(newPrefix), rest.length), crc32cJs(Buffer.concat([newPrefix, rest])))
})
