import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { loadMessageHandler } from '../../../src/config/message-handler-loader.js'
import { MessageHandler } from '../../../src/sidecar/pipeline/message-handler.js'
import type { KafkaRecord } from '../../../src/shared/kafka-record.js'

const EXAMPLE = fileURLToPath(new URL('../../../../examples/message-handler/orders-handler.mjs', import.meta.url))
const CONFIGURATION_DOC = fileURLToPath(new URL('../../../../docs/configuration.md', import.meta.url))

const record = (offset: number, value: string | null, headers: Array<[string, string]> = []): KafkaRecord => ({
  offset: String(offset),
  timestamp: '1700000000000',
  key: Buffer.from('k'),
  value: value === null ? null : Buffer.from(value),
  headerList: headers.map(([key, v]) => ({ key, value: Buffer.from(v) })),
})

test('the documented example handler filters, masks, re-keys and fans out as its comment says', async () => {
  const loaded = await loadMessageHandler({
    module: 'examples/message-handler/orders-handler.mjs',
    path: EXAMPLE,
    args: 'email,phone',
    key: '--message.handler',
  })
  assert.ok('handle' in loaded, JSON.stringify(loaded))
  const handler = new MessageHandler(loaded.handle, { module: 'orders-handler.mjs', args: 'email,phone', flow: 'source->target' })
  const out = await handler.apply({
    topic: 'orders',
    partition: 2,
    highWatermark: 10n,
    records: [
      record(0, '{"customerId":7,"email":"a@b.c","total":3}', [['trace', 't0']]),
      record(1, '{"customerId":8}', [['x-test', 'true']]),
      record(2, '{"orders":[{"customerId":9,"phone":"123"},{"customerId":10}]}'),
      record(3, 'not json'),
      record(4, null),
    ],
  })
  assert.deepEqual(out.records.map(r => [
    r.offset,
    r.key?.toString() ?? null,
    r.value?.toString() ?? null,
    (r.headerList ?? []).map(h => `${h.key}=${h.value?.toString()}`).join(','),
  ]), [
    ['0', '7', '{"customerId":7,"email":"***","total":3}', 'trace=t0,x-mirrored-from=orders/2/0'],
    ['2', '9', '{"customerId":9,"phone":"***"}', 'x-mirrored-from=orders/2/2'],
    ['2', '10', '{"customerId":10}', 'x-mirrored-from=orders/2/2'],
    ['3', 'k', 'not json', ''],
    ['4', 'k', null, ''],
  ])
})

test('the configuration reference\'s handler does what its comments say', async t => {
  const block = /```js\n(\/\/ handler\.mjs[\s\S]*?)```/.exec(readFileSync(CONFIGURATION_DOC, 'utf8'))?.[1]
  assert.ok(block !== undefined, 'docs/configuration.md holds the handler.mjs example')
  const dir = mkdtempSync(join(tmpdir(), 'readme-handler-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'handler.mjs')
  writeFileSync(path, block)
  const loaded = await loadMessageHandler({ module: './handler.mjs', path, args: '!', key: '--message.handler' })
  assert.ok('handle' in loaded, JSON.stringify(loaded))
  const out = await new MessageHandler(loaded.handle, { module: './handler.mjs', args: '!', flow: 'source->target' }).apply({
    topic: 'orders',
    partition: 0,
    highWatermark: 10n,
    records: [record(0, 'test-1'), record(1, 'batch:a,b'), record(2, 'hello', [['h', '1']]), { ...record(3, null), key: null }],
  })
  assert.deepEqual(out.records.map(r => [
    r.offset,
    r.key?.toString() ?? null,
    r.value?.toString() ?? null,
    (r.headerList ?? []).map(h => `${h.key}=${h.value?.toString()}`).join(','),
  ]), [
    ['1', 'k', 'a', ''],
    ['1', 'k', 'b', ''],
    ['2', 'customer-k', 'HELLO!', 'h=1,mirrored-by=sidecar'],
    ['3', null, null, 'mirrored-by=sidecar'],
  ])
})
