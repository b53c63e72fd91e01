/**
 * A group member in a process of its own, for tests that kill it (SIGKILL: its socket closes without a
 * LeaveGroup) or freeze it (SIGSTOP). Started by `MemberProcess` with its options as JSON in argv[2]; it tells
 * the parent what it owns over IPC and commits or stops when told.
 */
import { createGroupMember } from '../../src/kafka/wire/group/group-member-factory.js'
import type { GroupMember, GroupMemberOptions } from '../../src/kafka/wire/group/group-member.js'
import type { TopicPartition } from '../../src/kafka/wire/group/topic-partition.js'
import type { MemberProcessCommand, MemberProcessEvent } from './group-members.js'

const tell = (event: MemberProcessEvent): void => { process.send!(event) }
const options = JSON.parse(process.argv[2]!) as GroupMemberOptions
const plain = (partitions: readonly TopicPartition[]): TopicPartition[] => partitions.map(({ topic, partition }) => ({ topic, partition }))

const member: GroupMember = createGroupMember({ ...options, onError: error => tell({ event: 'error', message: String((error as Error).message) }) }, {
  assigned: async partitions => tell({ event: 'assigned', partitions: plain(partitions) }),
  revoking: async partitions => {
    await member.commit(partitions.map(partition => ({ ...partition, offset: 1n })))
    tell({ event: 'revoked', partitions: plain(partitions) })
  },
  lost: async partitions => tell({ event: 'lost', partitions: plain(partitions) }),
})

process.on('message', (command: MemberProcessCommand) => {
  if (command.command === 'commit') {
    member.commit(command.partitions.map(partition => ({ ...partition, offset: BigInt(command.offset) }))).then(
      () => tell({ event: 'committed', ok: true, kafkaCode: null }),
      (error: { kafkaCode?: string }) => tell({ event: 'committed', ok: false, kafkaCode: error.kafkaCode ?? null })
    )
  } else {
    member.stop().then(() => process.exit(0), () => process.exit(1))
  }
})

member.start().then(() => tell({ event: 'started', partitions: plain(member.owned) }), error => {
  tell({ event: 'error', message: String((error as Error).message) })
  process.exit(1)
})
