import type { ArgumentsCamelCase, CommandModule, Argv } from 'yargs'
import type { AuditClient } from '../../kafka/audit-client.js'
import { verifyCopy, type VerifyUntil } from '../verify/copy-verification.js'
import { targetTopicName } from '../../config/mirror-config.js'
import { clusterPair, connectClient, withClusterPairArgs, withCommonArgs } from '../cli/cluster-args.js'
import { ExitCode, UsageError } from '../cli/exit-codes.js'
import { note, write } from '../cli/output.js'
import { progressBar } from '../cli/progress-bar.js'
import { runCommand } from '../cli/run-command.js'
import { verifyDigests } from './verify-digests.js'
import { withVerifyCheckArgs, withVerifyRangeArgs, type VerifyArgs } from './verify-args.js'
import { judgeVerification, misplacedLines, verifyJson, verifyTable, type VerifyReport } from './verify-report.js'
import { chooseAlignment } from '../verify/alignment-choice.js'
import { policyFromArgs, withPolicyArgs } from '../cli/policy-args.js'
import { certificateRequest, writeVerifyCertificate, type CertificateRequest } from '../certificate/certificate-writer.js'
import type { ClusterConnection } from '../../config/cluster-connection.js'

function parseTime (text: string): number {
  const ms = Date.parse(text)
  if (!Number.isFinite(ms)) throw new UsageError(`--from-time "${text}": expected an ISO 8601 date-time such as 2026-01-31T12:00:00Z`)
  return ms
}

/** The flags of a record-by-record verify that exclude each other or must agree, checked before anything connects. */
function checkVerifyFlags (args: VerifyArgs): { fromTime: number | undefined, until: VerifyUntil } {
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
  const until: VerifyUntil = args['to-offset'] !== undefined ? { offset: args['to-offset'] } : args['until-mirrored'] ? 'mirrored' : 'default'
  return { fromTime, until }
}

/** Chooses the alignment and compares the copy record by record, drawing the progress on a terminal. */
async function runVerify (
  args: VerifyArgs,
  clients: { source: AuditClient, target: AuditClient },
  target: { topic: string, connection: ClusterConnection },
  range: ReturnType<typeof checkVerifyFlags>,
  bar: ReturnType<typeof progressBar>
): Promise<VerifyReport> {
  const { source } = clients
  const targetTopic = target.topic
  const { fromTime, until } = range
  const alignmentNotes: string[] = []
  const choice = await chooseAlignment(args, clients.target, target.connection, targetTopic, alignmentNotes)
  const started = Date.now()
  const result = await verifyCopy({
    source,
    target: clients.target,
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
  return { targetTopic, choice, alignmentNotes, result, seconds, verdict: judgeVerification(result, args) }
}

/** Prints the report (stdout) and its notes (stderr), and writes the certificate when asked for and passed. */
async function reportVerify (
  args: VerifyArgs,
  report: VerifyReport,
  clients: { source: AuditClient, target: AuditClient },
  certificate: CertificateRequest | undefined
): Promise<ExitCode> {
  const { result, verdict } = report
  await write(args.format === 'json' ? verifyJson(report, args) : verifyTable(report, args))
  for (const line of [...report.alignmentNotes, ...result.notes, ...result.partitions.flatMap(p => p.notes)]) note(line)
  if (args.format !== 'table') for (const line of misplacedLines(verdict.misplaced)) note(line)
  if (certificate !== undefined) {
    note(verdict.passed
      ? await writeVerifyCertificate(certificate, clients, { sourceTopic: args.topic, targetTopic: report.targetTopic }, result.partitions)
      : `no certificate written to ${certificate.file}: the verify did not pass`)
  }
  return verdict.passed ? ExitCode.OK : ExitCode.CHECK_FAILED
}

async function verifyHandler (args: ArgumentsCamelCase<VerifyArgs>): Promise<void> {
  await runCommand(args, async () => {
    const certificate = certificateRequest(args)
    if (args.digests) return await verifyDigests(args)
    const range = checkVerifyFlags(args)
    const targetTopic = args['target-topic'] ?? targetTopicName(policyFromArgs(args), args['source-alias'], args.topic)
    const { source: sourceConnection, target: targetConnection } = clusterPair(args)
    const source = await connectClient(sourceConnection, args)
    const bar = progressBar()
    try {
      const target = await connectClient(targetConnection, args)
      try {
        const report = await runVerify(args, { source, target }, { topic: targetTopic, connection: targetConnection }, range, bar)
        return await reportVerify(args, report, { source, target }, certificate)
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
    withVerifyCheckArgs(withVerifyRangeArgs(withClusterPairArgs(withPolicyArgs(withCommonArgs(yargs)))))
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
