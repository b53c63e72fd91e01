import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FlowRuntime, type Component } from '../../../../src/sidecar/pipeline/flow-runtime.js'
import { createLogger } from '../../../../src/shared/logger.js'

/** A component that records its start and stop in `calls`; `stop` may be told to fail or to hang. */
function part (
  name: string,
  calls: string[],
  behaviour: { stopFails?: boolean, stopHangs?: boolean, startGate?: Promise<void>, done?: Promise<void> } = {}
): Component {
  return {
    name,
    start: async () => {
      calls.push(`start ${name}`)
      await behaviour.startGate
    },
    stop: async () => {
      calls.push(`stop ${name}`)
      if (behaviour.stopFails === true) throw new Error(`${name} broke`)
      if (behaviour.stopHangs === true) await new Promise(() => {})
    },
    ...(behaviour.done === undefined ? {} : { done: behaviour.done }),
  }
}

function logged (): { lines: Array<Record<string, unknown>>, logger: ReturnType<typeof createLogger> } {
  const lines: Array<Record<string, unknown>> = []
  return { lines, logger: createLogger({ level: 'debug', write: line => { lines.push(JSON.parse(line) as Record<string, unknown>) } }) }
}

test('starts components in order and stops every one in reverse, once', async () => {
  const calls: string[] = []
  const { logger } = logged()
  const runtime = new FlowRuntime({ name: 'a->b', logger, stopBoundMs: 1_000 }, ['writer', 'pipeline', 'coordination'].map(name => part(name, calls)))
  await runtime.start()
  await Promise.all([runtime.stop(), runtime.stop()])
  assert.deepEqual(calls, ['start writer', 'start pipeline', 'start coordination', 'stop coordination', 'stop pipeline', 'stop writer'])
})

test('a stop that fails or passes its bound is logged with the component\'s name, and the next one still stops', async () => {
  const calls: string[] = []
  const { lines, logger } = logged()
  const runtime = new FlowRuntime({ name: 'a->b', logger, stopBoundMs: 50 }, [
    part('writer', calls),
    part('pipeline', calls, { stopHangs: true }),
    part('coordination', calls, { stopFails: true }),
  ])
  await runtime.start()
  await runtime.stop()
  assert.deepEqual(calls.filter(call => call.startsWith('stop')), ['stop coordination', 'stop pipeline', 'stop writer'])
  const warnings = lines.filter(line => line.level === 'warn').map(line => [line.component, line.msg ?? line.message])
  assert.equal(warnings.length, 2, JSON.stringify(lines))
  assert.equal(warnings[0]?.[0], 'coordination')
  assert.equal(warnings[1]?.[0], 'pipeline')
  assert.match(JSON.stringify(lines[0]), /coordination broke/, 'the failure itself is in the log line')
})

test('a stop during start starts nothing more and stops every component, the one starting included', async () => {
  const calls: string[] = []
  const { logger } = logged()
  let open!: () => void
  const gate = new Promise<void>(resolve => { open = resolve })
  const runtime = new FlowRuntime({ name: 'a->b', logger, stopBoundMs: 1_000 }, [
    part('writer', calls),
    part('pipeline', calls, { startGate: gate }),
    part('coordination', calls),
  ])
  const starting = runtime.start()
  await new Promise(resolve => setImmediate(resolve))
  const stopping = runtime.stop()
  open()
  await Promise.all([starting, stopping])
  assert.deepEqual(calls, ['start writer', 'start pipeline', 'stop coordination', 'stop pipeline', 'stop writer'])
})

test('done rejects with the first component failure, and onFailure hears it once', async () => {
  const { logger } = logged()
  let fail!: (error: Error) => void
  const failing = new Promise<void>((_resolve, reject) => { fail = reject })
  const runtime = new FlowRuntime({ name: 'a->b', logger, stopBoundMs: 1_000 }, [
    part('loss monitor', [], { done: failing }),
    part('pipeline', [], { done: Promise.resolve() }),
  ])
  const heard: string[] = []
  runtime.onFailure((error, component) => heard.push(`${component.name}: ${(error as Error).message}`))
  fail(new Error('records lost'))
  await assert.rejects(runtime.done, /records lost/)
  assert.deepEqual(heard, ['loss monitor: records lost'])
})
