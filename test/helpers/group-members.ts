import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { createGroupMember } from '../../src/kafka/wire/group/group-member-factory.js'
import type { GroupMember, GroupMemberOptions } from '../../src/kafka/wire/group/group-member.js'
import type { GroupMemberListener } from '../../src/kafka/wire/group/group-member-listener.js'
import { partitionKey, type TopicPartition } from '../../src/kafka/wire/group/topic-partition.js'
import { waitUntil } from './wait.js'

/** What a member process tells its parent. */
export type MemberProcessEvent =
  | { event: 'started', partitions: TopicPartition[] }
  | { event: 'assigned' | 'revoked' | 'lost', partitions: TopicPartition[] }
  | { event: 'committed', ok: boolean, kafkaCode: string | null }
  | { event: 'error', message: string }

/** What the parent tells a member process. */
export type MemberProcessCommand =
  | { command: 'commit', partitions: TopicPartition[], offset: string }
  | { command: 'stop' }

/**
 * Who owns each partition, kept from every member's callbacks (in this process and in member processes). A
 * partition given to one member while another still owns it is a violation; so is a partition revoked by a
 * member that does not own it.
 */
export class OwnershipLedger {
  readonly owners = new Map<string, string>()
  readonly violations: string[] = []
  /** Partitions each member was asked to revoke, in all. */
  readonly revokedCount = new Map<string, number>()
  /** Commits made inside revoking(), and those refused. */
  readonly revokeCommits = { ok: 0, refused: [] as string[] }

  took (member: string, partitions: readonly TopicPartition[]): void {
    for (const partition of partitions) {
      const owner = this.owners.get(partitionKey(partition))
      if (owner !== undefined && owner !== member) this.violations.push(`${partitionKey(partition)} given to ${member} while ${owner} owns it`)
      this.owners.set(partitionKey(partition), member)
    }
  }

  gaveUp (member: string, partitions: readonly TopicPartition[], revoked: boolean): void {
    if (revoked) this.revokedCount.set(member, (this.revokedCount.get(member) ?? 0) + partitions.length)
    for (const partition of partitions) {
      const owner = this.owners.get(partitionKey(partition))
      if (owner !== member) this.violations.push(`${partitionKey(partition)} given up by ${member} while ${owner ?? 'nobody'} owns it`)
      else this.owners.delete(partitionKey(partition))
    }
  }

  /** The partitions `member` owns, as keys, sorted. */
  ownedBy (member: string): string[] {
    return [...this.owners].filter(([, owner]) => owner === member).map(([key]) => key).sort()
  }

  /** Per member the number of partitions it owns. */
  counts (): Map<string, number> {
    const counts = new Map<string, number>()
    for (const owner of this.owners.values()) counts.set(owner, (counts.get(owner) ?? 0) + 1)
    return counts
  }

  revoked (member: string): number {
    return this.revokedCount.get(member) ?? 0
  }
}

/**
 * A member in this process whose callbacks keep `ledger`; in revoking() it commits offset `revokeOffset` for
 * each partition it gives up, as the mirror commits what the target acknowledged. Stopped when the test ends.
 */
export function memberInProcess (
  t: TestContext,
  ledger: OwnershipLedger,
  name: string,
  options: GroupMemberOptions,
  revokeOffset = 7n
): GroupMember {
  const listener: GroupMemberListener = {
    assigned: async partitions => {
      ledger.took(name, partitions)
      member.checkInvariants()
    },
    revoking: async partitions => {
      member.checkInvariants()
      try {
        await member.commit(partitions.map(partition => ({ ...partition, offset: revokeOffset })))
        ledger.revokeCommits.ok++
      } catch (error) {
        ledger.revokeCommits.refused.push(`${name}: ${(error as Error).message}`)
      }
      ledger.gaveUp(name, partitions, true)
    },
    lost: async partitions => ledger.gaveUp(name, partitions, false),
  }
  const member = createGroupMember(options, listener)
  t.after(() => member.stop())
  return member
}

const PROCESS_SCRIPT = fileURLToPath(new URL('./group-member-process.js', import.meta.url))

/** A member in a process of its own (see `group-member-process.ts`), its events kept in `ledger` under `name`. */
export class MemberProcess {
  readonly child: ChildProcess
  readonly events: MemberProcessEvent[] = []
  readonly startedAtMs = Date.now()

  constructor (t: TestContext, ledger: OwnershipLedger, readonly name: string, options: GroupMemberOptions) {
    this.child = fork(PROCESS_SCRIPT, [JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    this.child.on('message', (event: MemberProcessEvent) => {
      this.events.push(event)
      if (event.event === 'assigned') ledger.took(name, event.partitions)
      if (event.event === 'revoked') ledger.gaveUp(name, event.partitions, true)
      if (event.event === 'lost') ledger.gaveUp(name, event.partitions, false)
    })
    t.after(() => this.kill('SIGKILL'))
  }

  /** Sends `signal` to the process (SIGKILL: it dies as a crashed process does, no LeaveGroup, its socket closed by the kernel). */
  kill (signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal)
  }

  async exited (): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    await new Promise(resolve => this.child.once('exit', resolve))
  }

  send (command: MemberProcessCommand): void {
    this.child.send(command)
  }

  /** The first event of `kind` from index `from` on, waited for. */
  async next<K extends MemberProcessEvent['event']> (kind: K, from = 0, timeoutMs = 60_000): Promise<Extract<MemberProcessEvent, { event: K }>> {
    const find = (): MemberProcessEvent | undefined => this.events.slice(from).find(event => event.event === kind)
    await waitUntil(() => find() !== undefined || this.child.exitCode !== null, { timeoutMs, message: `${this.name}: event ${kind}` })
    const found = find()
    if (found === undefined) throw new Error(`${this.name} exited (${this.child.exitCode}) before ${kind}: ${JSON.stringify(this.events)}`)
    return found as Extract<MemberProcessEvent, { event: K }>
  }
}

/** `host:port` as the group member's bootstrap list. */
export function bootstrapOf (bootstrap: string): Array<{ host: string, port: number }> {
  return bootstrap.split(',').map(address => {
    const [host, port] = address.split(':')
    return { host: host!, port: Number(port) }
  })
}

/** What `threeMembersThenOneStops` saw. */
export interface GracefulStopSeen {
  readonly ledger: OwnershipLedger
  /** From c's stop() to a and b owning all 12 partitions. */
  readonly movedInMs: number
  /** a's and b's partitions before c stopped, and c's. */
  readonly before: { readonly a: string[], readonly b: string[], readonly c: string[] }
  /** Partitions a and b were asked to revoke before c stopped. */
  readonly revokedBefore: { readonly a: number, readonly b: number }
  /** The group's committed offsets after c stopped, by partition key. */
  readonly committed: Map<string, bigint>
}

/**
 * Three members of one group on a 12-partition topic: once stable, every partition is owned by exactly one
 * member, four each; then c stops gracefully (revoking, in which it commits, then leaving).
 */
export async function threeMembersThenOneStops (
  t: TestContext,
  options: GroupMemberOptions,
  partitions: readonly TopicPartition[]
): Promise<GracefulStopSeen> {
  const ledger = new OwnershipLedger()
  const members = ['a', 'b', 'c'].map(name => memberInProcess(t, ledger, name, options))
  await Promise.all(members.map(member => member.start()))
  await waitUntil(() => ledger.owners.size === 12 && [...ledger.counts().values()].every(count => count === 4), {
    message: '12 partitions, 4 per member',
  })
  for (const member of members) member.checkInvariants()
  const before = { a: ledger.ownedBy('a'), b: ledger.ownedBy('b'), c: ledger.ownedBy('c') }
  const revokedBefore = { a: ledger.revoked('a'), b: ledger.revoked('b') }

  const stoppingAtMs = Date.now()
  await members[2]!.stop()
  await waitUntil(() => ledger.owners.size === 12 && ledger.ownedBy('c').length === 0, { message: 'c\'s partitions taken by a and b' })
  const movedInMs = Date.now() - stoppingAtMs
  for (const member of members) member.checkInvariants()
  const committed = await members[0]!.committed(partitions)
  return { ledger, movedInMs, before, revokedBefore, committed }
}
