import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConfigError } from '../../../../../src/shared/errors.js'
import { createGroupMember } from '../../../../../src/kafka/wire/group/group-member-factory.js'
import type { GroupMemberOptions } from '../../../../../src/kafka/wire/group/group-member.js'
import type { GroupMemberListener } from '../../../../../src/kafka/wire/group/group-member-listener.js'

const listener: GroupMemberListener = { assigned: async () => {}, revoking: async () => {}, lost: async () => {} }
// Port 9 (discard): nothing connects in these tests, the options are refused or accepted before any connection.
const base: GroupMemberOptions = { bootstrap: [{ host: '127.0.0.1', port: 9 }], connection: { clientId: 'test' }, groupId: 'g', topics: ['t'] }

test('every problem of the options is named at once, key, value and what to do, before anything connects', () => {
  assert.throws(() => createGroupMember({
    ...base,
    groupProtocol: 'eager' as 'classic',
    groupInstanceId: '',
    sessionTimeoutMs: -5,
  }, listener), (error: unknown) => {
    assert.ok(error instanceof ConfigError)
    assert.deepEqual(error.message.split('\n'), [
      'group.protocol "eager": expected classic or consumer (consumer: KIP-848, brokers 4.0 and later)',
      'group.instance.id "": give a non-empty instance id, or none',
      'session.timeout.ms "-5": expected a positive integer of milliseconds',
    ])
    return true
  })
})

test('consumer protocol: the broker owns session and heartbeat times; classic: no remote assignor', () => {
  const consumer: GroupMemberOptions = { ...base, groupProtocol: 'consumer', sessionTimeoutMs: 10_000 }
  assert.throws(() => createGroupMember(consumer, listener), /session.timeout.ms "10000": with group.protocol=consumer/)
  const classic: GroupMemberOptions = { ...base, groupRemoteAssignor: 'uniform' }
  assert.throws(() => createGroupMember(classic, listener), /group.remote.assignor "uniform": applies to group.protocol=consumer only/)
})

test('the protocol is chosen as Java chooses it: classic by default, consumer when asked', () => {
  const classic = createGroupMember(base, listener)
  const consumer = createGroupMember({ ...base, groupProtocol: 'consumer' }, listener)
  assert.equal(classic.constructor.name, 'ClassicGroupMember')
  assert.equal(consumer.constructor.name, 'ConsumerGroupMember')
  assert.equal(classic.generationIdOrMemberEpoch, -1)
  assert.equal(consumer.generationIdOrMemberEpoch, 0)
  assert.deepEqual(classic.owned, [])
})
