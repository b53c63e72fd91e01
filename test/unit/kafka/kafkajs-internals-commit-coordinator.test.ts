import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

const require = createRequire(import.meta.url)

interface OffsetManager {
  commitOffsets: (offsets: { topics: Array<{ topic: string, partitions: Array<{ partition: number, offset: string }> }> }) => Promise<void>
}
const OffsetManagerClass = require('@kafka-mirror-sidecar/kafkajs/src/consumer/offsetManager') as new (options: object) => OffsetManager
const { KafkaJSProtocolError } = require('@kafka-mirror-sidecar/kafkajs/src/errors') as { KafkaJSProtocolError: new (error: object) => Error }
const { createErrorFromCode } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/error') as { createErrorFromCode: (code: number) => object }
const InstrumentationEmitter = require('@kafka-mirror-sidecar/kafkajs/src/instrumentation/emitter') as new () => object

/** A group coordinator as kafkajs holds it: connected, and answering OffsetCommit (or refusing it with NOT_COORDINATOR, code 16). */
function broker (name: string, commits: string[], notCoordinator: boolean): object {
  return {
    isConnected: () => true,
    offsetCommit: async () => {
      commits.push(name)
      if (notCoordinator) throw new KafkaJSProtocolError(createErrorFromCode(16))
    },
  }
}

test('a commit answered NOT_COORDINATOR (the group coordinator moved) sends the next commit to the coordinator found again', async () => {
  const commits: string[] = []
  const old = broker('old', commits, true)
  const current = broker('current', commits, false)
  const committed = {}
  const cluster = { refreshMetadata: async () => {}, findGroupCoordinator: async () => current, committedOffsets: () => committed }
  const manager = new OffsetManagerClass({
    cluster,
    coordinator: old,
    memberAssignment: { t: [0] },
    topicConfigurations: {},
    instrumentationEmitter: new InstrumentationEmitter(),
    groupId: 'g',
    generationId: 1,
    memberId: 'm',
  })
  const offsets = { topics: [{ topic: 't', partitions: [{ partition: 0, offset: '10' }] }] }
  await assert.rejects(manager.commitOffsets(offsets), /not the correct coordinator/)
  await manager.commitOffsets(offsets)
  assert.deepEqual(commits, ['old', 'current'])
})
