import { targetTopicName } from '../../config/mirror-config.js'
import type { AuditClient } from '../../kafka/audit-client.js'
import {
  checkPartitionDigests,
  describeDigestFinding,
  digestCheckPassed,
  type DigestPartitionCheck,
  loadRangeDigests,
} from '../../mirror-topics/digest-verification.js'
import { digestsTopicName, type RangeDigest } from '../../mirror-topics/range-digest.js'
import { createLogger, silentLogger } from '../../shared/logger.js'
import { clusterConnection, connectClient } from '../cli/cluster-args.js'
import { ExitCode, UsageError } from '../cli/exit-codes.js'
import { note, render, write, type Column } from '../cli/output.js'
import { policyFromArgs } from '../cli/policy-args.js'
import type { VerifyArgs } from './verify-args.js'

/** Flags of `verify` that need the source or the record-by-record comparison: refused with `--digests`, before anything connects. */
const SOURCE_ONLY_FLAGS: ReadonlyArray<[keyof VerifyArgs, string]> = [
  ['source', '--source'],
  ['source-command-config', '--source-command-config'],
  ['from-time', '--from-time'],
  ['wait', '--wait'],
  ['offset-syncs-topic', '--offset-syncs-topic'],
]

/** Usage problems of a `verify --digests` command line, as one error. */
function checkDigestArgs (args: VerifyArgs): void {
  for (const [key, flag] of SOURCE_ONLY_FLAGS) {
    if (args[key] !== undefined) {
      throw new UsageError(
        `${flag} and --digests exclude each other: --digests checks the target against the mirror's digests and reads nothing from the source; leave ${flag} out, or drop --digests to compare with the source`
      )
    }
  }
  if (args['until-mirrored']) {
    throw new UsageError('--until-mirrored and --digests exclude each other: the digests cover what the mirror committed; leave --until-mirrored out')
  }
  if (args.digest) {
    throw new UsageError(
      "--digest and --digests exclude each other: --digest hashes source and target ranges, --digests checks the target against the mirror's recorded digests; give one"
    )
  }
  if (args['digests-topic'] !== undefined && args['digests-topic'].trim() === '') {
    throw new UsageError('--digests-topic "": expected a topic name such as mirror-digests.source.internal')
  }
  if (args['to-offset'] !== undefined && args['from-offset'] !== undefined && args['to-offset'] <= args['from-offset']) {
    throw new UsageError(`--to-offset "${args['to-offset']}" is not after --from-offset "${args['from-offset']}"; give an end after the start`)
  }
}

type Row = { label: string | number, p: Omit<DigestPartitionCheck, 'partition' | 'findings' | 'notes'>, first?: string }

const columns: Column<Row>[] = [
  { header: 'PARTITION', value: r => r.label },
  { header: 'DIGESTS', value: r => r.p.ranges },
  { header: 'CHECKED', value: r => r.p.checked },
  { header: 'MATCHED', value: r => r.p.matched },
  { header: 'MISSING', value: r => r.p.missing },
  { header: 'DUPLICATED', value: r => r.p.duplicated },
  { header: 'EXTRA', value: r => r.p.extra },
  { header: 'CHANGED-RANGES', value: r => r.p.changedRanges },
  { header: 'NOT-CHECKED', value: r => r.p.notChecked },
  { header: 'UNCOVERED', value: r => r.p.uncovered },
  { header: 'FIRST-PROBLEM', value: r => r.first },
]

function total (partitions: readonly DigestPartitionCheck[]): Row['p'] {
  const t = { ranges: 0, checked: 0, matched: 0, missing: 0, duplicated: 0, extra: 0, changedRanges: 0, notChecked: 0, uncovered: 0 }
  for (const p of partitions) for (const k of Object.keys(t) as Array<keyof typeof t>) t[k] += p[k]
  return t
}

function inSourceRange (d: RangeDigest, args: VerifyArgs): boolean {
  if (args['from-offset'] !== undefined && d.sourceLast < BigInt(args['from-offset'])) return false
  if (args['to-offset'] !== undefined && d.sourceFirst >= BigInt(args['to-offset'])) return false
  return true
}

/** Checks each partition asked for (default: each with digests) against its digests; a note for each without. */
async function checkDigestPartitions (
  target: AuditClient,
  digests: { targetTopic: string, digestsTopic: string, selected: readonly RangeDigest[] },
  args: VerifyArgs,
  notes: string[]
): Promise<DigestPartitionCheck[]> {
  const { targetTopic, digestsTopic, selected } = digests
  const partitions = args.partition ?? [...new Set(selected.map(d => d.partition))].sort((a, b) => a - b)
  const results: DigestPartitionCheck[] = []
  for (const partition of partitions) {
    if (!selected.some(d => d.partition === partition)) {
      notes.push(
        `partition ${partition}: no digests of ${args.topic} in ${digestsTopic}${args['from-offset'] !== undefined || args['to-offset'] !== undefined ? ' in the source offsets asked for' : ''}: nothing checked there`
      )
    }
    results.push(await checkPartitionDigests({
      target,
      targetTopic,
      partition,
      digests: selected.filter(d => d.partition === partition),
      lookaheadRecords: args['lookahead-records'],
      maxFindings: args['max-findings'],
    }))
  }
  return results
}

/** What `verify --digests` found: per partition, in total, and whether it passed. */
interface DigestsReport {
  readonly targetTopic: string
  readonly digestsTopic: string
  readonly passed: boolean
  readonly seconds: number
  readonly sum: ReturnType<typeof total>
  readonly results: readonly DigestPartitionCheck[]
  readonly notes: readonly string[]
}

/** The report as JSON (`--format json`). */
function digestsJson (report: DigestsReport, args: VerifyArgs): string {
  const { targetTopic, digestsTopic, passed, seconds, sum, results, notes } = report
  return JSON.stringify(
    {
      topic: args.topic,
      targetTopic,
      digestsTopic,
      passed,
      seconds,
      total: sum,
      partitions: results.map(p => ({
        ...p,
        findings: p.findings.map(f => ({
          kind: f.kind,
          records: f.records,
          targetOffset: f.targetOffset ?? null,
          targetFrom: f.targetFrom,
          targetUntil: f.targetUntil,
          digest: {
            sourceFirst: String(f.digest.sourceFirst),
            sourceLast: String(f.digest.sourceLast),
            targetStart: String(f.digest.targetStart),
            count: f.digest.count,
          },
          text: describeDigestFinding(f),
        })),
      })),
      notes,
    },
    null,
    2
  ) + '\n'
}

/** The report as a table (with the findings and the verdict under it) or csv. */
function digestsTable (report: DigestsReport, args: VerifyArgs): string {
  const { targetTopic, digestsTopic, passed, seconds, sum, results } = report
  const rows: Row[] = results.map(p => ({ label: p.partition, p, ...(p.findings[0] === undefined ? {} : { first: describeDigestFinding(p.findings[0]) }) }))
  rows.push({ label: 'TOTAL', p: sum })
  let text = render(args.format, columns, rows, { isTotal: r => r.label === 'TOTAL', keep: args.totals === true })
  if (args.format === 'table') {
    const findingLines = results.flatMap(p => p.findings.map(describeDigestFinding))
    if (findingLines.length > 0) text += '\n' + findingLines.join('\n') + '\n'
    text +=
      `\n${passed ? 'PASSED' : 'FAILED'}: ${sum.checked} records in ${sum.ranges} digests checked against ${targetTopic} in ${seconds.toFixed(1)} s, without the source (digests from ${digestsTopic})` +
      `${sum.duplicated > 0 && args['allow-duplicates'] ? '; duplicates allowed' : ''}${sum.notChecked > 0 ? `; ${sum.notChecked} records not checked (gone from the target)` : ''}${sum.uncovered > 0 ? `; ${sum.uncovered} target records between digests not judged` : ''}\n`
  }
  return text
}

/**
 * `verify --digests`: the target alone, against the digests the sidecar recorded of what it copied
 * (`--digests.enabled true`). Exit 0 when every digest matches, 1 when one differs or there is
 * none to check, 2 when the check cannot run.
 */
export async function verifyDigests (args: VerifyArgs): Promise<ExitCode> {
  checkDigestArgs(args)
  const targetTopic = args['target-topic'] ?? targetTopicName(policyFromArgs(args), args['source-alias'], args.topic)
  const digestsTopic = args['digests-topic'] ?? digestsTopicName(args['source-alias'])
  const targetConnection = clusterConnection({
    alias: 'target',
    bootstrap: args.target,
    bootstrapFlag: '--target',
    configFile: args['target-command-config'],
    configFlag: '--target-command-config',
  })
  const target = await connectClient(targetConnection, args)
  try {
    if (!(await target.hasTopic(digestsTopic))) {
      throw new UsageError(`--digests: no digests topic ${digestsTopic} on the target cluster (${targetConnection.brokers.join(',')}); run the sidecar with --digests.enabled true (mm2.properties digests.enabled = true), or name the topic with --digests-topic`)
    }
    const targetPartitions = await target.partitionsOf(targetTopic, '--target-topic')
    const unknown = (args.partition ?? []).filter(p => !targetPartitions.includes(p))
    if (unknown.length > 0) throw new UsageError(`--partition "${unknown[0]}": target topic ${targetTopic} has partitions 0..${targetPartitions.length - 1}`)
    const logger = args.verbose ? createLogger({ level: 'debug' }) : silentLogger
    const started = Date.now()
    const { digests } = await loadRangeDigests({ ...targetConnection, connectionTimeoutMs: args['timeout-ms'] }, digestsTopic, logger)
    const notes: string[] = []
    const ofTopic = digests.filter(d => d.sourceTopic === args.topic)
    const elsewhere = ofTopic.find(d => d.targetTopic !== targetTopic)
    if (elsewhere !== undefined) {
      notes.push(`digests in ${digestsTopic} map ${args.topic} to ${elsewhere.targetTopic} too; only those of ${targetTopic} are checked`)
    }
    const selected = ofTopic.filter(d => d.targetTopic === targetTopic && inSourceRange(d, args))
    const results = await checkDigestPartitions(target, { targetTopic, digestsTopic, selected }, args, notes)
    const seconds = (Date.now() - started) / 1000
    const sum = total(results)
    const nothing = sum.ranges === 0
    if (nothing) {
      notes.push(
        `no digests of ${args.topic} -> ${targetTopic} in ${digestsTopic}${args.partition === undefined ? '' : ` for partition(s) ${args.partition.join(',')}`} could be compared: nothing verified`
      )
    }
    const passed = !nothing && digestCheckPassed(results, args['allow-duplicates'])
    const report: DigestsReport = { targetTopic, digestsTopic, passed, seconds, sum, results, notes }
    await write(args.format === 'json' ? digestsJson(report, args) : digestsTable(report, args))
    for (const line of [...notes, ...results.flatMap(p => p.notes)]) note(line)
    return passed ? ExitCode.OK : ExitCode.CHECK_FAILED
  } finally {
    await target.close()
  }
}
