import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MessageHandler } from '../../../../src/sidecar/pipeline/message-handler.js'
import { MirrorFlow } from '../../../../src/sidecar/pipeline/mirror-flow.js'
import type { FetchedBatch } from '../../../../src/ports/ports.js'
import { ErrorCodes, MirrorError } from '../../../../src/shared/errors.js'
import type { KafkaRecord } from '../../../../src/shared/kafka-record.js'
import type { HandlerRecord, MessageHandlerFunction } from '../../../../src/shared/message-handler-api.js'
import { silentLogger } from '../../../../src/shared/logger.js'
import { FakeForwardedBatch, fakeFlowConfig, fakePorts, records, until } from '../../../helpers/fake-ports.js'

const fetched = (batch: readonly KafkaRecord[], nextOffset?: bigint): FetchedBatch =>
  ({ topic: 'orders', partition: 3, highWatermark: 100n, records: batch, ...(nextOffset === undefined ? {} : { nextOffset }) })
const handler = (fn: MessageHandlerFunction, args?: string): MessageHandler => new MessageHandler(fn, { module: './handler.js', args, flow: 'source->target' })
const summary = (batch: FetchedBatch): Array<[string, string | null]> => batch.records.map(r => [r.offset, r.value?.toString() ?? null])

test('the handler sees each record with topic, partition, offset, timestamp, key, value and headers in wire order', async () => {
  const seen: HandlerRecord[] = []
  const contexts: unknown[] = []
  const source: KafkaRecord = {
    offset: '7',
    timestamp: '1700000000007',
    key: Buffer.from('k'),
    value: null,
    headerList: [{ key: 'a', value: Buffer.from('1') }, { key: 'b', value: null }, { key: 'a', value: Buffer.from('2') }],
  }
  const out = await handler((record, context) => { seen.push(record); contexts.push(context); return record }, 'x=1').apply(fetched([source]))
  assert.deepEqual(seen, [
    { topic: 'orders', partition: 3, offset: '7', timestamp: '1700000000007', key: Buffer.from('k'), value: null, headers: source.headerList },
  ])
  assert.deepEqual(contexts, [{ args: 'x=1', flow: 'source->target' }])
  assert.deepEqual(out.records, [{ ...source, headers: { a: [Buffer.from('1'), Buffer.from('2')], b: null } }], 'returned unchanged: written as it was')
})

test('filter, rewrite, re-key, headers and fan-out: outputs carry their source offset, in order', async () => {
  const out = await handler(record => {
    const n = Number(record.offset)
    if (n % 3 === 0) return null // filter
    if (n % 3 === 1) {
      return { ...record, key: `key-${n}`, value: record.value?.toString().toUpperCase() ?? null, headers: [...record.headers, { key: 'seen', value: 'yes' }] }
    }
    return [{ value: `${n}-a` }, { value: `${n}-b`, timestamp: 5, headers: { h: ['x', 'y'] } }] // fan-out
  }).apply(fetched(records(0, 6)))
  assert.deepEqual(summary(out), [['1', 'V1'], ['2', '2-a'], ['2', '2-b'], ['4', 'V4'], ['5', '5-a'], ['5', '5-b']])
  const [first, , fanned] = out.records as [KafkaRecord, KafkaRecord, KafkaRecord]
  assert.deepEqual(first.key, Buffer.from('key-1'))
  assert.deepEqual(first.headerList, [{ key: 'seen', value: Buffer.from('yes') }])
  assert.equal(first.timestamp, '1700000000001', 'a field left out keeps the source record\'s')
  assert.equal(fanned.timestamp, '5')
  assert.deepEqual(fanned.headerList, [{ key: 'h', value: Buffer.from('x') }, { key: 'h', value: Buffer.from('y') }])
  assert.equal(out.nextOffset, 6n, 'past the last record, which the handler dropped')
})

test('an async handler is awaited; [] drops like null; the fetch\'s own next offset wins when it is further', async () => {
  const out = await handler(async record => Number(record.offset) === 1 ? { value: 'one' } : []).apply(fetched(records(0, 3), 10n))
  assert.deepEqual(summary(out), [['1', 'one']])
  assert.equal(out.nextOffset, 10n)
})

test('a throwing handler or a malformed result is an error naming topic, partition and offset', async () => {
  const failure = async (fn: MessageHandlerFunction): Promise<MirrorError> => {
    try {
      await handler(fn).apply(fetched(records(40, 3)))
    } catch (error) {
      assert.ok(error instanceof MirrorError)
      assert.equal(error.code, ErrorCodes.MESSAGE_HANDLER)
      assert.equal(error.retriable, false)
      return error
    }
    assert.fail('expected a failure')
  }
  const at41 = (fn: (record: HandlerRecord) => unknown): MessageHandlerFunction =>
    (record => (record.offset === '41' ? fn(record) : record)) as MessageHandlerFunction
  const cases: Array<[MessageHandlerFunction, RegExp]> = [
    [
      at41(() => {
        throw new TypeError('bad input')
      }),
      /message handler \.\/handler\.js threw on orders partition 3 offset 41: TypeError: bad input; the mirror stopped/,
    ],
    [
      at41(async () => {
        throw new Error('later')
      }),
      /threw on orders partition 3 offset 41: Error: later/,
    ],
    [at41(() => undefined), /malformed result for orders partition 3 offset 41: it returned undefined; return the record/],
    [at41(() => 'text'), /offset 41: it is a string; give an object/],
    [at41(() => ({ value: 42 })), /offset 41: value is a number; give a Buffer/],
    [at41(() => [{ value: 'ok' }, { key: {} }]), /offset 41: record 1 of the result: key is an object \(Object\)/],
    [at41(() => ({ headers: [{ value: 'x' }] })), /offset 41: header 0 is an object \(Object\) without a string key/],
    [at41(() => ({ headers: 'x' })), /offset 41: headers is a string/],
    [at41(() => ({ timestamp: -3 })), /offset 41: timestamp is -3; give milliseconds/],
    [at41(() => ({ topic: 'elsewhere' })), /offset 41: topic "elsewhere" is not the source topic "orders"/],
    [at41(() => ({ partition: 0 })), /offset 41: partition 0 is not the source partition 3; records stay in their source partition/],
  ]
  for (const [fn, expected] of cases) assert.match((await failure(fn)).message, expected)
})

test(
  'a flow with a handler writes what it returns, commits past dropped records, and stops at a failing record without committing it',
  { timeout: 15_000 },
  async t => {
    const ports = fakePorts({ orders: 2 }, 1)
    const flow = new MirrorFlow(fakeFlowConfig({ numProducers: 1 }), ports, {
      logger: silentLogger,
      drainTimeoutMs: 2_000,
      messageHandler: record => {
        const n = Number(record.offset)
        if (record.value?.toString() === 'poison') throw new Error('cannot parse')
        if (n % 2 === 1) return null
        return [{ value: `${n}a` }, { value: `${n}b` }]
      },
    })
    t.after(() =>
      flow.stop().catch(() => {
        /* clean-up: a flow the test made fail rejects its stop */
      })
    )
    await flow.start()
    const source = ports.current()
    await source.deliver('orders', 0, records(0, 4))
    await until(() => ports.target.values('orders', 0).length === 4, 'the outputs on the target')
    assert.deepEqual(ports.target.values('orders', 0), ['0a', '0b', '2a', '2b'])
    await source.deliver('orders', 1, [...records(1, 1), ...records(3, 1)])
    assert.equal(await flow.commit(), true)
    assert.equal(source.committed('orders', 0), 4n, 'past record 3, which the handler dropped')
    assert.equal(source.committed('orders', 1), 4n, 'a fetch the handler dropped whole (offsets 1 and 3) is committed past')

    const poison = [...records(4, 2), { ...(records(6, 1)[0] as KafkaRecord), value: Buffer.from('poison') }, ...records(7, 2)]
    await source.deliver('orders', 0, poison)
    await assert.rejects(
      flow.done,
      (error: unknown) =>
        error instanceof MirrorError && error.code === ErrorCodes.MESSAGE_HANDLER && /orders partition 0 offset 6: Error: cannot parse/.test(error.message)
    )
    await source.deliver('orders', 0, records(9, 2))
    assert.deepEqual(ports.target.values('orders', 0), ['0a', '0b', '2a', '2b'], 'nothing of the failing fetch, nothing after it')
    assert.equal(source.committed('orders', 0), 4n, 'committed up to the failing fetch, not into it')
  }
)

test('a flow configured with a handler refuses to start without the loaded function', () => {
  const config = fakeFlowConfig({ messageHandler: { module: './handler.js', path: '/x/handler.js', args: undefined, key: '--message.handler' } })
  assert.throws(
    () => new MirrorFlow(config, fakePorts({ orders: 1 }), { logger: silentLogger }),
    /--message.handler "\.\/handler\.js" is not loaded; load it with loadMessageHandlers/
  )
})

test(
  'a flow with a handler decodes a batch handed over undecoded and handles its records: nothing is forwarded past the handler',
  { timeout: 15_000 },
  async t => {
    const ports = fakePorts({ orders: 1 }, 1)
    const flow = new MirrorFlow(fakeFlowConfig({ numProducers: 1 }), ports, {
      logger: silentLogger,
      messageHandler: record => ({ value: `h${record.offset}` }),
    })
    t.after(() =>
      flow.stop().catch(() => {
        /* clean-up: a flow the test made fail rejects its stop */
      })
    )
    await flow.start()
    const forwarded = new FakeForwardedBatch(records(0, 3))
    await ports.current().deliverForwarded('orders', 0, forwarded)
    await until(() => ports.target.values('orders', 0).length === 3, 'the handled records on the target')
    assert.deepEqual(ports.target.values('orders', 0), ['h0', 'h1', 'h2'])
    assert.equal(ports.target.forwardedWrites, 0)
    assert.equal(forwarded.decodes, 1)
    assert.equal(await flow.commit(), true)
    assert.equal(ports.current().committed('orders', 0), 3n)
  }
)
