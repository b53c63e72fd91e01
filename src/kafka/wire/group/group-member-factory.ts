import { ConfigError, type ConfigProblem } from '../../../shared/errors.js'
import { ClassicGroupMember } from './classic-group-member.js'
import { ConsumerGroupMember } from './consumer-group-member.js'
import type { GroupMember, GroupMemberOptions } from './group-member.js'
import type { GroupMemberListener } from './group-member-listener.js'

/** Every problem of `options`, each naming the Java key, the value and what to do. */
function problemsOf (options: GroupMemberOptions): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  const protocol = options.groupProtocol ?? 'classic'
  if (protocol !== 'classic' && protocol !== 'consumer') {
    problems.push({ key: 'group.protocol', value: String(protocol), message: 'expected classic or consumer (consumer: KIP-848, brokers 4.0 and later)' })
  }
  if (options.groupId === '') problems.push({ key: 'group.id', value: '', message: 'a group member needs a non-empty group id' })
  if (options.topics.length === 0) problems.push({ key: 'topics', value: '', message: 'a group member needs at least one topic' })
  if (options.groupInstanceId === '') problems.push({ key: 'group.instance.id', value: '', message: 'give a non-empty instance id, or none' })
  const positive: Array<[string, number | undefined]> = [
    ['session.timeout.ms', options.sessionTimeoutMs],
    ['heartbeat.interval.ms', options.heartbeatIntervalMs],
    ['max.poll.interval.ms', options.rebalanceTimeoutMs],
  ]
  for (const [key, value] of positive) {
    if (value !== undefined && (!Number.isInteger(value) || value <= 0)) {
      problems.push({ key, value: String(value), message: 'expected a positive integer of milliseconds' })
    }
  }
  if (protocol === 'consumer' && (options.sessionTimeoutMs !== undefined || options.heartbeatIntervalMs !== undefined)) {
    problems.push({
      key: 'session.timeout.ms',
      value: String(options.sessionTimeoutMs ?? options.heartbeatIntervalMs),
      message: 'with group.protocol=consumer the broker sets session and heartbeat times (group.consumer.session.timeout.ms): remove the key',
    })
  }
  if (protocol === 'classic' && options.groupRemoteAssignor !== undefined && options.groupRemoteAssignor !== null) {
    const message = 'applies to group.protocol=consumer only: remove it or set group.protocol=consumer'
    problems.push({ key: 'group.remote.assignor', value: options.groupRemoteAssignor, message })
  }
  return problems
}

/**
 * A group member of the protocol `options.groupProtocol` names, as Java's consumer chooses by `group.protocol`:
 * 'consumer' speaks KIP-848, 'classic' (the default) JoinGroup and SyncGroup with cooperative rebalancing.
 * Throws a ConfigError listing every problem of the options before anything connects.
 */
export function createGroupMember (options: GroupMemberOptions, listener: GroupMemberListener): GroupMember {
  const problems = problemsOf(options)
  if (problems.length > 0) throw new ConfigError(problems)
  return options.groupProtocol === 'consumer' ? new ConsumerGroupMember(options, listener) : new ClassicGroupMember(options, listener)
}
