import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as entry from '../../src/index.js'

test('the package name resolves to the public entry point, and no deeper', async () => {
  const byName = await import('kafka-mirror-sidecar') as Record<string, unknown>
  assert.deepEqual(Object.keys(byName).sort(), Object.keys(entry).sort())
  await assert.rejects(import('kafka-mirror-sidecar/dist/src/config/values.js' as string), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' })
})

test('the entry point holds what a program embedding the mirror uses', () => {
  for (const name of [
    'MirrorSidecar',
    'configFromMm1',
    'configFromMm2',
    'mergeEnv',
    'MirrorError',
    'ConfigError',
    'createLogger',
    'assertKafkajsPatched',
  ] as const) {
    assert.equal(typeof entry[name], 'function', name)
  }
  assert.equal(entry.ErrorCodes.CONFIG, 'MIRROR_CONFIG')
  assert.equal(entry.targetTopicName({ kind: 'default', separator: '.' }, 'east', 'orders'), 'east.orders')
  assert.equal(entry.targetTopicName({ kind: 'identity' }, 'east', 'orders'), 'orders')
})
