import assert from 'node:assert/strict'
import dgram from 'node:dgram'
import { test } from 'node:test'
import { MitKdc } from '../helpers/kdc.js'

test('the test KDC starts on the next port when its first one is taken by a socket a TCP probe does not see (UDP)', async t => {
  const first = Number(process.env.TEST_EXTRA_PORTS ?? 39000) + 90
  const blocker = dgram.createSocket('udp4')
  await new Promise<void>((resolve, reject) => {
    blocker.once('error', reject)
    blocker.bind(first, '0.0.0.0', () => resolve())
  })
  t.after(() => blocker.close())
  const kdc = await MitKdc.start(t)
  assert.ok(kdc.port > first, `the KDC took port ${kdc.port}, after the taken ${first}`)
  assert.match(await kdc.kadmin('listprincs'), /krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST/)
})
