import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { verifyCopy, type VerifyUntil } from '../verify/copy-verification.js'
import { type ComparisonCounts, type FindingKind, FindingKinds } from '../verify/record-comparator.js'
import {
  beyondCommittedTotal,
  describeFinding,
  findMisplaced,
  type PartitionVerification,
  totalCounts,
  unverifiable,
  verificationPassed,
  vouchedRange,
} from '../verify/verification-report.js'
import { targetTopicName } from '../../config/mirror-config.js'
import { clusterPair, connectClient, nonNegativeNumber, positiveInteger, withClusterPairArgs, withCommonArgs } from '../cli/cluster-args.js'
import { ExitCode, UsageError } from '../cli/exit-codes.js'
import { note, render, write, type Column } from '../cli/output.js'
import { runCommand } from '../cli/run-command.js'
import { verifyDigests } from './verify-digests.js'
import type { VerifyArgs } from './verify-args.js'
import { alignedBy, chooseAlignment, type AlignedBy, type AlignmentChoice } from '../verify/alignment-choice.js'
import { policyFromArgs, withPolicyArgs } from '../cli/policy-args.js'
import { certificateRequest, writeVerifyCertificate } from '../certificate/certificate-writer.js'

function partitionList (partitions: readonly number[]): string {
  return `partition${partitions.length === 1 ? '' : 's'} ${partitions.join(',')}`
}

/** One footer line: which partitions were aligned how. */
function alignmentLine (choice: AlignmentChoice, byPartition: ReadonlyArray<[number, AlignedBy]>): string {
  const synced = byPartition.filter(([, by]) => by === 'offset-syncs').map(([p]) => p)
  const ordered = byPartition.filter(([, by]) => by === 'order').map(([p]) => p)
  const parts = [
    ...(synced.length > 0 ? [`offset-syncs (${choice.offsetSyncsTopic}) on ${partitionList(synced)}`] : []),
    ...(ordered.length > 0
      ? [`order on ${partitionList(ordered)} (${choice.orderReason ?? `no offset sync in ${choice.offsetSyncsTopic} covers the start`})`]
      : []),
  ]
  return `alignment: ${parts.length > 0 ? parts.join('; ') : 'no partitions'}`
}

/** Partitions named one by one in the table's summary; past that, in total (per partition in --format json). */
const COVERAGE_PARTITIONS_LISTED = 8

/**
 * The summary's lines on what was covered: the source range checked per partition (or in total)
 * and what bounds it, then the target's records beyond the mirror's committed position (copies
 * not committed yet, and duplicates among them), which are counted but not compared.
 */
function coverageLines (
  partitions: readonly PartitionVerification[],
  upTo: 'to-offset' | 'committed' | 'end',
  args: Pick<VerifyArgs, 'group' | 'to-offset'>
): string[] {
  const bound =
    upTo === 'to-offset'
      ? `--to-offset ${args['to-offset']}`
      : upTo === 'committed'
        ? `the committed position of group '${args.group}'`
        : `the source end offsets (no group '${args.group}' on the source)`
  const ranges = (p: PartitionVerification): string => (p.sourceUntilOffset > p.sourceFromOffset ? `${p.sourceFromOffset}..${p.sourceUntilOffset - 1}` : 'none')
  const checked =
    partitions.length <= COVERAGE_PARTITIONS_LISTED
      ? `checked: source offsets ${partitions.map(p => `${ranges(p)} of partition ${p.partition}`).join(', ')} (up to ${bound})`
      : `checked: source offsets of ${partitions.length} partitions from their start up to ${bound}, ${partitions.reduce((n, p) => n + Math.max(0, p.sourceUntilOffset - p.sourceFromOffset), 0)} offsets in all (per partition: SOURCE-RANGE above)`
  const beyond = beyondCommittedTotal(partitions)
  if (beyond.records === 0) return [checked, 'beyond the committed position: no records on the target']
  const where = partitions
    .filter(p => (p.beyondCommitted?.records ?? 0) > 0)
    .slice(0, COVERAGE_PARTITIONS_LISTED)
    .map(p => `${p.alignment.targetPartition}@${p.beyondCommitted!.fromTargetOffset}..${p.beyondCommitted!.untilTargetOffset - 1}`)
    .join(', ')
  const more = beyond.partitions > COVERAGE_PARTITIONS_LISTED ? ` and ${beyond.partitions - COVERAGE_PARTITIONS_LISTED} more partitions` : ''
  const verdict =
    beyond.duplicated > 0
      ? `${beyond.duplicated} of them duplicated (one more copy of a source record already on the target)`
      : 'copies not committed yet, no duplicates among them'
  const unmatched = beyond.unmatched > 0 ? `; ${beyond.unmatched} match no source record past the committed position` : ''
  return [checked, `beyond the committed position: ${beyond.records} records on the target (target ${where}${more}), not compared: ${verdict}${unmatched}`]
}

/** Where the target was read from: the aligned copy, or the earliest copy before it and then the aligned one (`0@0, match 0@2000`). */
function targetFrom (v: PartitionVerification): string {
  const { targetPartition, targetOffset } = v.alignment
  return v.earlierCopies === undefined
    ? `${targetPartition}@${targetOffset}`
    : `${targetPartition}@${v.earlierCopies.fromTargetOffset}, match ${targetPartition}@${targetOffset}`
}

type Row = { label: string | number, v?: PartitionVerification, counts: PartitionVerification['counts'], first?: string }

const columns: Column<Row>[] = [
  { header: 'PARTITION', value: r => r.label },
  {
    header: 'SOURCE-RANGE',
    value: r =>
      r.v === undefined ? undefined : r.v.sourceUntilOffset > r.v.sourceFromOffset ? `${r.v.sourceFromOffset}-${r.v.sourceUntilOffset - 1}` : 'none',
    json: 'sourceRange',
  },
  { header: 'TARGET-FROM', value: r => (r.v === undefined ? undefined : targetFrom(r.v)), json: 'targetFrom' },
  { header: 'CHECKED', value: r => r.counts.checked },
  { header: 'MISSING', value: r => r.counts.missing },
  { header: 'DUPLICATED', value: r => r.counts.duplicated },
  { header: 'EXTRA', value: r => r.counts.extra },
  { header: 'CHANGED', value: r => r.counts.changed },
  { header: 'OUT-OF-ORDER', value: r => r.counts.outOfOrder },
  { header: 'FIRST-PROBLEM', value: r => r.first },
]

/** Where stderr is not a terminal: nothing drawn. */
const NO_PROGRESS_BAR = {
  update () { /* no terminal to draw on */ },
  done () { /* nothing drawn */ },
}

function progressBar (): {
  update: (p: { partition: number, sourceOffset: number, fromOffset: number, untilOffset: number, bytes: number }) => void
  done: () => void
} {
  if (process.stderr.isTTY !== true) return NO_PROGRESS_BAR
  const started = Date.now()
  let last = 0
  return {
    update: p => {
      const now = Date.now()
      if (now - last < 100) return
      last = now
      const span = Math.max(1, p.untilOffset - p.fromOffset)
      const ratio = Math.min(1, Math.max(0, (p.sourceOffset + 1 - p.fromOffset) / span))
      const width = 30
      const filled = Math.round(ratio * width)
      const mbps = p.bytes / 1_048_576 / Math.max(0.001, (now - started) / 1000)
      process.stderr.write(
        `\r\x1b[Kpartition ${p.partition} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0)}% ${mbps.toFixed(1)} MB/s`
      )
    },
    done: () => {
      process.stderr.write('\r\x1b[K')
    },
  }
}

const countOf: Record<FindingKind, keyof ComparisonCounts> = {
  missing: 'missing',
  duplicated: 'duplicated',
  extra: 'extra',
  changed: 'changed',
  'out-of-order': 'outOfOrder',
}

/** Findings counted but not listed because of `--max-findings`, per kind (kinds with none left out). */
function findingsNotListed (p: PartitionVerification): Partial<Record<FindingKind, number>> {
  const out: Partial<Record<FindingKind, number>> = {}
  for (const kind of FindingKinds) {
    const unlisted = (p.counts[countOf[kind]] as number) - p.findings.filter(f => f.kind === kind).length
    if (unlisted > 0) out[kind] = unlisted
  }
  return out
}

function parseTime (text: string): number {
  const ms = Date.parse(text)
  if (!Number.isFinite(ms)) throw new UsageError(`--from-time "${text}": expected an ISO 8601 date-time such as 2026-01-31T12:00:00Z`)
  return ms
}

async function verifyHandler (args: ArgumentsCamelCase<VerifyArgs>): Promise<void> {
  await runCommand(args, async () => {
    const certificate = certificateRequest(args)
    if (args.digests) return await verifyDigests(args)
    if (args['digests-topic'] !== undefined) {
      throw new UsageError("--digests-topic needs --digests (check the target against the mirror's digests); add --digests or leave --digests-topic out")
    }
    if (args['from-offset'] !== undefined && args['from-time'] !== undefined) throw new UsageError('--from-offset and --from-time exclude each other; give one')
    if (args['to-offset'] !== undefined && args['until-mirrored']) throw new UsageError('--to-offset and --until-mirrored exclude each other; give one')
    if (args['to-offset'] !== undefined && args['from-offset'] !== undefined && args['to-offset'] <= args['from-offset']) {
      throw new UsageError(`--to-offset "${args['to-offset']}" is not after --from-offset "${args['from-offset']}"; give an end after the start`)
    }
    if (args['offset-syncs-topic'] !== undefined && !args['offset-syncs']) {
      throw new UsageError('--offset-syncs-topic and --no-offset-syncs exclude each other; give one')
    }
    const fromTime = args['from-time'] === undefined ? undefined : parseTime(args['from-time'])
    const targetTopic = args['target-topic'] ?? targetTopicName(policyFromArgs(args), args['source-alias'], args.topic)
    const { source: sourceConnection, target: targetConnection } = clusterPair(args)
    const until: VerifyUntil = args['to-offset'] !== undefined ? { offset: args['to-offset'] } : args['until-mirrored'] ? 'mirrored' : 'default'
    const source = await connectClient(sourceConnection, args)
    const bar = progressBar()
    try {
      const target = await connectClient(targetConnection, args)
      try {
        const alignmentNotes: string[] = []
        const choice = await chooseAlignment(args, target, targetConnection, targetTopic, alignmentNotes)
        const started = Date.now()
        const result = await verifyCopy({
          source,
          target,
          topic: args.topic,
          targetTopic,
          ...(args.partition === undefined ? {} : { partitions: args.partition }),
          ...(args['from-offset'] !== undefined
            ? { from: { offset: args['from-offset'] } }
            : fromTime !== undefined
              ? { from: { timestampMs: fromTime } }
              : {}),
          until,
          group: args.group,
          ...(args.wait === undefined ? {} : { waitSeconds: args.wait }),
          ...(args.digest ? { digestRangeRecords: args['digest-range-records'] } : {}),
          lookaheadRecords: args['lookahead-records'],
          maxFindingsPerKind: args['max-findings'],
          ...(choice.aligner === undefined ? {} : { aligner: choice.aligner }),
          onProgress: bar.update,
        })
        bar.done()
        const seconds = (Date.now() - started) / 1000
        const total = totalCounts(result.partitions)
        const misplaced = findMisplaced(result.partitions)
        // A copy that did not catch up within --wait fails the check even when what was mirrored matches.
        const waitTimedOut = result.waitTimedOut
        // Partitions whose source records are gone (deleted, expired) while the target holds some: not judged, so not passed.
        const notVerified = unverifiable(result.partitions).map(p => p.partition)
        const beyond = beyondCommittedTotal(result.partitions)
        // A record past the committed position (or the source end) that copies no source record fails the check unless
        // --allow-in-flight; past --to-offset the target is out of the range asked for.
        const inFlightFailing = args['allow-in-flight'] || result.checkedUpTo === 'to-offset' ? 0 : beyond.unmatched
        const matched = verificationPassed(total, args['allow-duplicates'], beyond.duplicated, inFlightFailing) && !waitTimedOut
        const passed = matched && notVerified.length === 0
        const findingLines = result.partitions.flatMap(p => p.findings.map(f => describeFinding(f, p.partition, p.alignment.targetPartition)))
        const misplacedLines = misplaced.map(
          m =>
            `wrong partition: source ${m.sourcePartition}@${m.sourceOffset} is missing from target partition ${m.sourcePartition} and is extra in target partition ${m.targetPartition} at offset ${m.targetOffset}`
        )
        const notes = [...alignmentNotes, ...result.notes, ...result.partitions.flatMap(p => p.notes)]
        const byPartition = result.partitions.map(p => [p.partition, alignedBy(p.alignment)] as [number, AlignedBy])
        if (args.format === 'json') {
          await write(
            JSON.stringify(
              {
                topic: args.topic,
                targetTopic,
                passed,
                waitTimedOut,
                notVerified,
                seconds,
                checkedUpTo: result.checkedUpTo,
                total,
                beyondCommitted: beyond,
                alignment: { offsetSyncsTopic: choice.offsetSyncsTopic ?? null, byPartition: Object.fromEntries(byPartition) },
                partitions: result.partitions.map(p => ({
                  partition: p.partition,
                  sourceFromOffset: p.sourceFromOffset,
                  sourceUntilOffset: p.sourceUntilOffset,
                  targetFromOffset: p.targetFromOffset,
                  targetUntilOffset: p.targetUntilOffset,
                  alignment: p.alignment,
                  earlierCopies: p.earlierCopies ?? null,
                  beyondCommitted: p.beyondCommitted ?? null,
                  counts: p.counts,
                  findings: p.findings.map(({ hash: _hash, ...f }) => f),
                  findingsNotListed: findingsNotListed(p),
                  notes: p.notes,
                })),
                misplaced,
                notes: [...alignmentNotes, ...result.notes],
              },
              null,
              2
            ) + '\n'
          )
        } else {
          const rows: Row[] = result.partitions.map(p => ({
            label: p.partition,
            v: p,
            counts: p.counts,
            ...(p.findings[0] === undefined
              ? {}
              : {
                  first: describeFinding(
                    [...p.findings].sort((a, b) => (a.sourceOffset ?? a.targetOffset ?? 0) - (b.sourceOffset ?? b.targetOffset ?? 0))[0]!,
                    p.partition,
                    p.alignment.targetPartition
                  ),
                }),
          }))
          rows.push({ label: 'TOTAL', counts: total })
          let text = render(args.format, columns, rows, { isTotal: r => r.label === 'TOTAL', keep: args.totals === true })
          if (args.format === 'table') {
            const unlistedLines = result.partitions.flatMap(p => {
              const unlisted = Object.entries(findingsNotListed(p)).map(([kind, n]) => `${n} more ${kind}`)
              return unlisted.length === 0 ? [] : [`partition ${p.partition}: ${unlisted.join(', ')} not listed (--max-findings ${args['max-findings']})`]
            })
            const beyondLines = result.partitions.flatMap(p =>
              (p.beyondCommitted?.duplicateOffsets ?? []).map(
                offset =>
                  `duplicated beyond the committed position: target ${p.alignment.targetPartition}@${offset} is one more copy of a source record already on the target`
              )
            )
            const unmatchedLines = result.partitions.flatMap(p =>
              (result.checkedUpTo === 'to-offset' ? [] : p.beyondCommitted?.unmatchedOffsets ?? []).map(
                offset =>
                  `no source record beyond the committed position: target ${p.alignment.targetPartition}@${offset} matches no source record past offset ${p.sourceUntilOffset} of partition ${p.partition}`
              )
            )
            const lines = [...misplacedLines, ...findingLines, ...unlistedLines, ...beyondLines, ...unmatchedLines]
            if (lines.length > 0) text += '\n' + lines.join('\n') + '\n'
            const changed = Object.entries(total.changedFields).filter(([, n]) => n > 0).map(([field, n]) => `${field} ${n}`)
            text +=
              `\n${passed ? 'PASSED' : matched ? 'NOT VERIFIED' : 'FAILED'}: ${total.checked} records checked in ${seconds.toFixed(1)} s (${(total.bytes / 1_048_576 / Math.max(seconds, 0.001)).toFixed(1)} MB/s)` +
              `${changed.length > 0 ? `; changed fields: ${changed.join(', ')}` : ''}${total.duplicated > 0 && args['allow-duplicates'] ? '; duplicates allowed' : ''}${waitTimedOut ? `; the copy did not catch up within --wait ${args.wait} s` : ''}${passed ? `; vouches for ${vouchedRange(result.partitions, COVERAGE_PARTITIONS_LISTED)}` : ''}${beyond.unmatched > 0 && result.checkedUpTo !== 'to-offset' ? `; ${beyond.unmatched} records beyond the committed position match no source record${args['allow-in-flight'] ? ' (allowed: --allow-in-flight)' : ''}` : ''}${notVerified.length > 0 ? `; partition(s) ${notVerified.join(', ')}: the source holds no records any more, nothing to compare the target with (--digests checks it from the target alone)` : ''}\n` +
              coverageLines(result.partitions, result.checkedUpTo, args).join('\n') +
              '\n' +
              alignmentLine(choice, byPartition) +
              '\n'
          }
          await write(text)
        }
        for (const line of notes) note(line)
        if (args.format !== 'table') for (const line of misplacedLines) note(line)
        if (certificate !== undefined) {
          note(passed
            ? await writeVerifyCertificate(certificate, { source, target }, { sourceTopic: args.topic, targetTopic }, result.partitions)
            : `no certificate written to ${certificate.file}: the verify did not pass`)
        }
        return passed ? ExitCode.OK : ExitCode.CHECK_FAILED
      } finally {
        await target.close()
      }
    } finally {
      bar.done()
      await source.close()
    }
  })
}

export const verifyCommand: CommandModule<object, VerifyArgs> = {
  command: 'verify',
  describe:
    "Compare the copy record by record (key, value, headers, timestamp) per partition, up to the mirror's committed position: missing, duplicated, extra, changed, out-of-order records. The PASSED line names the source and target ranges it vouches for; the target's records beyond the committed position are counted, and duplicates among them, or records matching no source record, fail the check too.",
  builder: yargs =>
    withClusterPairArgs(withPolicyArgs(withCommonArgs(yargs)))
      .option('topic', { type: 'string', demandOption: true, describe: 'Source topic.' })
      .option('target-topic', { type: 'string', describe: 'Target topic (default: from the replication policy).' })
      .option('partition', {
        type: 'string',
        array: true,
        coerce: (values: unknown[]) => values.map(v => positiveInteger('--partition', 0)(v)),
        describe: 'Only these source partitions.',
      })
      .option('from-offset', { type: 'string', coerce: positiveInteger('--from-offset', 0), describe: 'First source offset (clamped to the earliest offset).' })
      .option('from-time', { type: 'string', describe: 'Start at the first source record at or after this ISO 8601 time.' })
      .option('to-offset', { type: 'string', coerce: positiveInteger('--to-offset', 0), describe: 'Stop before this source offset.' })
      .option('until-mirrored', { type: 'boolean', default: false, describe: "Stop at the mirror group's committed offsets (the group must exist)." })
      .option('group', {
        type: 'string',
        default: 'mirror-sidecar',
        describe:
          "The mirror's consumer group: by default records past its committed offsets are in flight and not compared; their copies on the target are counted, and duplicates among them fail the check.",
      })
      .option('wait', {
        type: 'string',
        coerce: nonNegativeNumber('--wait'),
        describe: 'Wait up to SECONDS for the copy to catch up with the source end offsets first.',
      })
      .option('allow-duplicates', {
        type: 'boolean',
        default: false,
        describe: 'Pass with duplicates (at-least-once delivery), in the compared range and beyond the committed position; they are still reported.',
      })
      .option('allow-in-flight', {
        type: 'boolean',
        default: false,
        describe:
          'Pass with target records beyond the committed position that match no source record there (a copy still being written while the source changes); they are still reported.',
      })
      .option('digest', { type: 'boolean', default: false, describe: 'Compare per-range hashes first; go record by record only in ranges that differ.' })
      .option('digest-range-records', {
        type: 'string',
        default: '1000',
        coerce: positiveInteger('--digest-range-records'),
        describe: 'Records per range for --digest.',
      })
      .option('lookahead-records', {
        type: 'string',
        default: '1000',
        coerce: positiveInteger('--lookahead-records'),
        describe: "How far ahead a record's copy is looked for before it is called missing or extra.",
      })
      .option('max-findings', {
        type: 'string',
        default: '20',
        coerce: positiveInteger('--max-findings'),
        describe: 'Findings listed per kind and partition (counts are always complete).',
      })
      .option('offset-syncs', {
        type: 'boolean',
        default: true,
        describe: "Align source and target by the sidecar's offset syncs when their topic is on the target (--no-offset-syncs: by order, first common record).",
      })
      .option('offset-syncs-topic', { type: 'string', describe: 'Offset-syncs topic on the target (default mirror-offset-syncs.<source-alias>.internal).' })
      .option('digests', {
        type: 'boolean',
        default: false,
        describe:
          'Check the target alone against the digests the sidecar recorded of what it copied (--digests.enabled true); reads nothing from the source, so it works after source retention deleted the records.',
      })
      .option('digests-topic', { type: 'string', describe: 'Digests topic on the target (default mirror-digests.<source-alias>.internal); with --digests.' })
      .option('certificate', {
        type: 'string',
        describe: 'When the verify passes, write a signed completeness certificate to FILE (check it with mirror-check certificate); needs --signing-key.',
      })
      .option('signing-key', {
        type: 'string',
        describe: 'Ed25519 private key (PEM, PKCS8) signing --certificate: openssl genpkey -algorithm ed25519 -out signing.pem',
      })
      .example('$0 verify --source src:9092 --target dst:9092 --topic orders', 'Verify everything the mirror-sidecar group has committed.')
      .example(
        '$0 verify --source src:9092 --target dst:9092 --topic orders --wait 30 --allow-duplicates --format json',
        'Wait for the copy to catch up, then verify; duplicates do not fail.'
      )
      .example('$0 verify --digests --target dst:9092 --topic orders', "Check the copy against the mirror's digests, without the source.")
      .example(
        '$0 verify --source src:9092 --target dst:9092 --topic orders --replication-policy default --source-alias east --digest',
        'MirrorMaker 2 naming (east.orders), range hashes first.'
      ) as unknown as Argv<VerifyArgs>,
  handler: verifyHandler,
}
