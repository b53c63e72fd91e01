import { existsSync, rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import type { AuditClient } from '../../kafka/audit-client.js'
import { FenceAdmin, type TopicAclBinding } from '../../kafka/fence-admin.js'
import { clusterConnection, connectClient, nonNegativeNumber, withCommonArgs, type CommonArgs } from '../cli/cluster-args.js'
import { ExitCode, UsageError } from '../cli/exit-codes.js'
import { note, render, write, type Column } from '../cli/output.js'
import { runCommand } from '../cli/run-command.js'
import { checkPrincipals, planFence, readFenceState, writeFenceState, type FenceAcl } from './fence-plan.js'

export interface FenceArgs extends CommonArgs {
  source?: string
  'source-command-config'?: string
  topic: string[]
  'allow-principal': string[]
  'deny-principal': string[]
  execute: boolean
  rollback: boolean
  'settle-seconds': number
  'state-file': string
}

type Row = { action: string, binding: TopicAclBinding }

const columns: Column<Row>[] = [
  { header: 'ACTION', value: r => r.action },
  { header: 'TOPIC', value: r => r.binding.resourceName },
  { header: 'PRINCIPAL', value: r => r.binding.principal },
  { header: 'HOST', value: r => r.binding.host },
  { header: 'OPERATION', value: r => r.binding.operation },
  { header: 'PERMISSION', value: r => r.binding.permission },
]

/** A producer the partition leader knows, and whether its last batch is younger than the fence. */
interface ProducerRow {
  readonly topic: string
  readonly partition: number
  readonly producerId: string
  readonly producerEpoch: number
  readonly lastTimestamp: string
  readonly afterFence: boolean
  readonly openTransactionFrom: string | null
}

/** What the fence was seen to hold: end offsets still for the settle window, and no producer writing since the fence. */
interface FenceProof {
  readonly held: boolean
  readonly settleSeconds: number
  /** When the end offsets last moved (or the fence was created, if they never did). */
  readonly stillSince: string
  /** Partitions whose end offset still moved when the wait ended. */
  readonly moving: ReadonlyArray<{ topic: string, partition: number, endOffset: number }>
  readonly producers: readonly ProducerRow[]
}

/** How long the end offsets may keep moving before the fence is called bypassed: this many settle windows. */
const SETTLE_WINDOWS_WAITED = 3
const POLL_MS = 500

async function endOffsets (client: AuditClient, partitions: ReadonlyMap<string, number[]>): Promise<Map<string, number>> {
  const ends = new Map<string, number>()
  for (const [topic, list] of partitions) {
    for (const [p, offset] of await client.listOffsets(topic, list, 'latest')) ends.set(`${topic}-${p}`, offset)
  }
  return ends
}

/**
 * Waits until the end offsets of every fenced partition stayed the same for `settleSeconds`
 * (at most `SETTLE_WINDOWS_WAITED` windows), then asks each leader which producers it knows
 * (DescribeProducers, KIP-664): one whose last batch is younger than the fence wrote through it.
 */
async function proveFence (
  client: AuditClient,
  admin: FenceAdmin,
  partitions: ReadonlyMap<string, number[]>,
  fencedAtMs: number,
  settleSeconds: number
): Promise<FenceProof> {
  const deadline = fencedAtMs + settleSeconds * 1000 * SETTLE_WINDOWS_WAITED
  let previous = await endOffsets(client, partitions)
  let stillSince = fencedAtMs
  let moving: Array<{ topic: string, partition: number, endOffset: number }> = []
  while (Date.now() - stillSince < settleSeconds * 1000) {
    if (Date.now() >= deadline) break
    await sleep(POLL_MS)
    const now = await endOffsets(client, partitions)
    moving = [...now].filter(([key, offset]) => previous.get(key) !== offset).map(([key, endOffset]) => {
      const at = key.lastIndexOf('-')
      return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)), endOffset }
    })
    if (moving.length > 0) stillSince = Date.now()
    previous = now
  }
  const producers: ProducerRow[] = []
  for (const [topic, list] of partitions) {
    for (const answer of await admin.describeProducers(topic, list)) {
      for (const p of answer.producers) {
        producers.push({
          topic,
          partition: answer.partition,
          producerId: p.producerId,
          producerEpoch: p.producerEpoch,
          lastTimestamp: new Date(p.lastTimestampMs).toISOString(),
          afterFence: p.lastTimestampMs >= fencedAtMs,
          openTransactionFrom: p.currentTxnStartOffset === '-1' ? null : p.currentTxnStartOffset,
        })
      }
    }
  }
  const held = moving.length === 0 && Date.now() - stillSince >= settleSeconds * 1000 && !producers.some(p => p.afterFence)
  return { held, settleSeconds, stillSince: new Date(stillSince).toISOString(), moving, producers }
}

function proofLines (proof: FenceProof): string[] {
  const lines: string[] = []
  const after = proof.producers.filter(p => p.afterFence)
  for (const p of after) {
    lines.push(`producer ${p.producerId} (epoch ${p.producerEpoch}) wrote to ${p.topic}-${p.partition} after the fence (last batch ${p.lastTimestamp})`)
  }
  for (const m of proof.moving) {
    lines.push(`${m.topic}-${m.partition}: end offset still moving (now ${m.endOffset}) after ${SETTLE_WINDOWS_WAITED} settle windows`)
  }
  for (const p of proof.producers.filter(p => p.openTransactionFrom !== null)) {
    lines.push(`producer ${p.producerId} has a transaction open on ${p.topic}-${p.partition} since offset ${p.openTransactionFrom}: its coordinator may still commit or abort it (markers are not topic writes)`)
  }
  lines.push(
    proof.held
      ? `FENCE HELD: end offsets still for ${proof.settleSeconds} s (since ${proof.stillSince}); DescribeProducers: ${proof.producers.length} producer(s) known, none wrote after the fence`
      : `FENCE NOT HELD: ${after.length} producer(s) wrote after the fence, ${proof.moving.length} partition(s) still moving; find the writer (a super user, or a principal the fence does not name: --deny-principal)`
  )
  return lines
}

/** `--rollback`: deletes exactly the ACLs the fence recorded in its state file, then the file. */
async function rollbackFence (args: FenceArgs, admin: FenceAdmin, state: NonNullable<ReturnType<typeof readFenceState>>): Promise<ExitCode> {
  await admin.deleteAcls(state.acls)
  rmSync(args['state-file'])
  const rows = state.acls.map(binding => ({ action: 'deleted', binding }))
  const json = { mode: 'rollback', stateFile: args['state-file'], acls: rows }
  await write(args.format === 'json' ? JSON.stringify(json, null, 2) + '\n' : render(args.format, columns, rows))
  note(`mirror-check: rollback: ${rows.length} ACL(s) of the fence deleted; ${args['state-file']} removed`)
  return ExitCode.OK
}

async function fenceHandler (args: ArgumentsCamelCase<FenceArgs>): Promise<void> {
  await runCommand(args, async () => {
    const allow = [...new Set(args['allow-principal'])]
    const deny = [...new Set(args['deny-principal'])]
    const topics = [...new Set(args.topic)]
    if (args.execute && args.rollback) throw new UsageError('--execute and --rollback exclude each other; give one')
    if (!args.rollback) checkPrincipals(allow, deny)
    if (args.execute && existsSync(args['state-file'])) {
      throw new UsageError(`--state-file "${args['state-file']}": exists, a fence is in place; roll it back first (--rollback) or give another --state-file`)
    }
    const state = args.rollback ? readFenceState(args['state-file']) : undefined
    const connection = clusterConnection({
      alias: 'source',
      bootstrap: args.source,
      bootstrapFlag: '--source',
      configFile: args['source-command-config'],
      configFlag: '--source-command-config',
    })
    const client = await connectClient(connection, args)
    const admin = new FenceAdmin(client)
    try {
      if (state !== undefined) return await rollbackFence(args, admin, state)
      const partitions = new Map<string, number[]>()
      const acls = new Map<string, TopicAclBinding[]>()
      for (const topic of topics) {
        partitions.set(topic, await client.partitionsOf(topic))
        const bindings = await admin.topicAcls(topic)
        if (bindings === undefined) {
          throw new UsageError(
            `fence impossible on the source cluster (${connection.brokers.join(',')}): it runs no authorizer (DescribeAcls: SECURITY_DISABLED), so no ACL can stop a producer; stop the applications' producers yourself (or run the brokers with authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer), then check with mirror-check rpo`
          )
        }
        acls.set(topic, bindings)
      }
      const plan = planFence(topics, acls, allow, deny)
      const notes = [
        ...plan.wildcardAllows.map(b => {
          const resource = b.patternType === 'PREFIXED' ? `topics prefixed ${b.resourceName}` : `topic ${b.resourceName}`
          return `warning: ALLOW ${b.operation} for ${b.principal} on ${resource}: principals the fence does not name keep writing through it; name them with --deny-principal`
        }),
        ...plan.unfenced.map(t => `warning: ${t}: no principal to deny (no ALLOW WRITE besides --allow-principal); name the applications (--deny-principal)`),
      ]
      const toCreate = plan.acls.filter(a => !a.exists).map(a => a.binding)
      const rowOf = (a: FenceAcl): Row => ({ action: a.exists ? 'exists' : args.execute ? 'created' : 'create', binding: a.binding })
      const rows = plan.acls.map(rowOf)
      if (!args.execute) {
        notes.push(`dry run, nothing written; --execute creates ${toCreate.length} ACL(s) and records them in ${args['state-file']} (--rollback deletes exactly those)`)
        const json = { mode: 'dry-run', stateFile: args['state-file'], acls: rows, notes }
        await write(args.format === 'json' ? JSON.stringify(json, null, 2) + '\n' : render(args.format, columns, rows))
        for (const line of notes) note(`mirror-check: ${line}`)
        return ExitCode.OK
      }
      // The record first: should CreateAcls fail half way, --rollback still finds every binding it may have made.
      writeFenceState(args['state-file'], { v: 1, bootstrap: connection.brokers.join(','), createdAt: new Date().toISOString(), acls: toCreate })
      await admin.createAcls(toCreate)
      const fencedAtMs = Date.now()
      const proof = await proveFence(client, admin, partitions, fencedAtMs, args['settle-seconds'])
      const lines = proofLines(proof)
      if (args.format === 'json') {
        const json = { mode: 'execute', stateFile: args['state-file'], fencedAt: new Date(fencedAtMs).toISOString(), acls: rows, proof, notes }
        await write(JSON.stringify(json, null, 2) + '\n')
      } else {
        await write(render(args.format, columns, rows) + (args.format === 'table' ? '\n' + lines.join('\n') + '\n' : ''))
      }
      for (const line of notes) note(`mirror-check: ${line}`)
      if (args.format !== 'table') for (const line of lines) note(`mirror-check: ${line}`)
      return proof.held ? ExitCode.OK : ExitCode.CHECK_FAILED
    } finally {
      await admin.close()
      await client.close()
    }
  })
}

export const fenceCommand: CommandModule<object, FenceArgs> = {
  command: 'fence',
  describe:
    'Write fence of the mirrored source topics through Kafka ACLs: a DENY WRITE per topic for every principal with an ALLOW WRITE on it (and --deny-principal) except --allow-principal (the mirror), recorded in --state-file; then proves it (end offsets still for --settle-seconds, DescribeProducers: no producer wrote after it). Dry run unless --execute; --rollback deletes exactly what the fence created. Exit 1 when the fence does not hold; 2 where the cluster runs no authorizer.',
  builder: yargs =>
    withCommonArgs(yargs)
      .option('source', { type: 'string', describe: 'Source cluster brokers (host:port,...); default: bootstrap.servers in --source-command-config.' })
      .option('source-command-config', {
        type: 'string',
        describe: 'Java client .properties for the source cluster (an admin principal that may create ACLs).',
      })
      .option('topic', { type: 'string', array: true, default: [] as string[], describe: 'Source topic to fence (repeatable).' })
      .option('allow-principal', {
        type: 'string',
        array: true,
        default: [] as string[],
        describe: "Principal that keeps writing (repeatable): the mirror's, e.g. User:mirror.",
      })
      .option('deny-principal', {
        type: 'string',
        array: true,
        default: [] as string[],
        describe: 'Application principal to deny besides those with an ALLOW WRITE on the topics (repeatable).',
      })
      .option('execute', { type: 'boolean', default: false, describe: 'Create the ACLs and prove the fence (default: print the plan).' })
      .option('rollback', { type: 'boolean', default: false, describe: 'Delete exactly the ACLs recorded in --state-file, then remove it.' })
      .option('settle-seconds', {
        type: 'string',
        default: '10',
        coerce: nonNegativeNumber('--settle-seconds'),
        describe: 'How long the end offsets must stay still to call the fence held.',
      })
      .option('state-file', {
        type: 'string',
        default: 'mirror-fence.json',
        describe: 'Where --execute records the ACLs it created, and --rollback reads them.',
      })
      .check(argv => {
        if (!argv.rollback && argv.topic.length === 0) throw new UsageError('--topic: missing; name the source topics to fence')
        return true
      })
      .example(
        '$0 fence --source src:9092 --source-command-config admin.properties --topic orders --allow-principal User:mirror',
        'The plan: which DENY WRITE ACLs the fence would create.'
      )
      .example(
        '$0 fence --source src:9092 --source-command-config admin.properties --topic orders --allow-principal User:mirror --execute',
        'Fence and prove it.'
      )
      .example('$0 fence --source src:9092 --source-command-config admin.properties --rollback', 'Remove the fence.') as unknown as Argv<FenceArgs>,
  handler: fenceHandler,
}
