import { readFileSync } from 'node:fs'
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import type { AuditClient } from '../../kafka/audit-client.js'
import { clusterConnection, connectClient, type CommonArgs, withCommonArgs } from '../cli/cluster-args.js'
import { ExitCode, UsageError } from '../cli/exit-codes.js'
import { note, render, write, type Column } from '../cli/output.js'
import { runCommand } from '../cli/run-command.js'
import { type CertifiedRange, parseCertificate, readPublicKey, signatureProblem, type SignedCertificate } from '../certificate/completeness-certificate.js'
import { hashTargetRecords } from '../certificate/target-records-hash.js'

interface CertificateArgs extends CommonArgs {
  file: string
  'public-key': string
  target?: string
  'target-command-config'?: string
}

/** One certified range as checked against the target: `ok`, `not-checked` (no target given), or `failed` with why. */
interface RangeCheck {
  readonly sourceTopic: string
  readonly targetTopic: string
  readonly range: CertifiedRange
  readonly result: 'ok' | 'failed' | 'not-checked'
  readonly problem?: string
}

/** Recomputes one range's records and SHA-256 on the target; a range whose offsets are gone or not there yet fails. */
async function checkRange (target: AuditClient, targetTopic: string, r: CertifiedRange): Promise<Omit<RangeCheck, 'sourceTopic' | 'targetTopic' | 'range'>> {
  if (r.targetUntilOffset > r.targetFromOffset) {
    const [earliest, latest] = await Promise.all([
      target.listOffsets(targetTopic, [r.targetPartition], 'earliest'),
      target.listOffsets(targetTopic, [r.targetPartition], 'latest'),
    ])
    const start = earliest.get(r.targetPartition) ?? 0
    const end = latest.get(r.targetPartition) ?? 0
    if (start > r.targetFromOffset) return { result: 'failed', problem: `target offsets ${r.targetFromOffset}..${start - 1} are deleted (log start ${start})` }
    if (end < r.targetUntilOffset) return { result: 'failed', problem: `the target ends at offset ${end}, the range at ${r.targetUntilOffset}` }
  }
  const hashed = await hashTargetRecords(target, targetTopic, r.targetPartition, r.targetFromOffset, r.targetUntilOffset)
  if (hashed.records !== r.records) return { result: 'failed', problem: `${hashed.records} records on the target, the certificate names ${r.records}` }
  if (hashed.sha256 !== r.sha256) {
    return {
      result: 'failed',
      problem: `SHA-256 of the target records differs (${hashed.sha256.slice(0, 16)}..., certified ${r.sha256.slice(0, 16)}...): a record was changed`,
    }
  }
  return { result: 'ok' }
}

const columns: Column<RangeCheck>[] = [
  { header: 'TARGET-TOPIC', value: c => c.targetTopic },
  { header: 'PARTITION', value: c => c.range.partition },
  {
    header: 'SOURCE-RANGE',
    value: c => (c.range.sourceUntilOffset > c.range.sourceFromOffset ? `${c.range.sourceFromOffset}-${c.range.sourceUntilOffset - 1}` : 'none'),
  },
  {
    header: 'TARGET-RANGE',
    value: c =>
      c.range.targetUntilOffset > c.range.targetFromOffset
        ? `${c.range.targetPartition}@${c.range.targetFromOffset}-${c.range.targetUntilOffset - 1}`
        : 'none',
  },
  { header: 'RECORDS', value: c => c.range.records },
  { header: 'TARGET-CHECK', value: c => c.result, json: 'result' },
  { header: 'PROBLEM', value: c => c.problem },
]

function readCertificateFile (path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(`certificate file "${path}": cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give the file verify --certificate wrote`)
  }
}

async function certificateHandler (args: ArgumentsCamelCase<CertificateArgs>): Promise<void> {
  await runCommand(args, async () => {
    const publicKey = readPublicKey(args['public-key'])
    const text = readCertificateFile(args.file)
    const targetConnection = args.target === undefined && args['target-command-config'] === undefined
      ? undefined
      : clusterConnection({
        alias: 'target',
        bootstrap: args.target,
        bootstrapFlag: '--target',
        configFile: args['target-command-config'],
        configFlag: '--target-command-config',
      })
    const parsed = parseCertificate(text)
    const certificate: SignedCertificate | undefined = 'problem' in parsed ? undefined : parsed
    const problem = 'problem' in parsed ? parsed.problem : signatureProblem(parsed, publicKey)
    const checks: RangeCheck[] = []
    const notes: string[] = []
    if (certificate !== undefined && problem === undefined) {
      const ranges = certificate.payload.topics.flatMap(t => t.ranges.map(range => ({ sourceTopic: t.sourceTopic, targetTopic: t.targetTopic, range })))
      if (targetConnection === undefined) {
        checks.push(...ranges.map(r => ({ ...r, result: 'not-checked' as const })))
        notes.push('signature checked; give --target to recompute the digests of the target records')
      } else {
        const target = await connectClient(targetConnection, args)
        try {
          const clusterId = await target.clusterId()
          if (clusterId !== certificate.payload.target.clusterId) {
            const elsewhere = `the cluster at --target is ${clusterId}, the certificate names ${certificate.payload.target.clusterId}`
            checks.push(...ranges.map(r => ({ ...r, result: 'failed' as const, problem: elsewhere })))
          } else {
            for (const r of ranges) checks.push({ ...r, ...(await checkRange(target, r.targetTopic, r.range)) })
          }
        } finally {
          await target.close()
        }
      }
    }
    const valid = problem === undefined && checks.every(c => c.result !== 'failed')
    if (args.format === 'json') {
      await write(JSON.stringify({
        file: args.file,
        valid,
        signatureValid: problem === undefined,
        problem: problem ?? null,
        targetChecked: targetConnection !== undefined && problem === undefined,
        payload: certificate?.payload ?? null,
        ranges: checks.map(c => ({ sourceTopic: c.sourceTopic, targetTopic: c.targetTopic, ...c.range, result: c.result, problem: c.problem ?? null })),
      }, null, 2) + '\n')
    } else {
      let out = checks.length > 0 ? render(args.format, columns, checks) : ''
      if (args.format === 'table') {
        const failed = checks.filter(c => c.result === 'failed').length
        const about = certificate === undefined
          ? ''
          : ` (issued ${certificate.payload.issuedAt} by mirror-check ${certificate.payload.tool.version}, source cluster ${certificate.payload.source.clusterId}, target cluster ${certificate.payload.target.clusterId})`
        const verdict =
          problem ??
          (failed > 0
            ? `${failed} of ${checks.length} ranges differ on the target`
            : targetConnection === undefined
              ? 'signature valid, target not checked'
              : `signature valid, ${checks.length} ranges match the target`)
        out += `\n${valid ? 'VALID' : 'INVALID'}: ${args.file}${about}: ${verdict}\n`
      }
      await write(out)
    }
    for (const line of notes) note(line)
    return valid ? ExitCode.OK : ExitCode.CHECK_FAILED
  })
}

export const certificateCommand: CommandModule<object, CertificateArgs> = {
  command: 'certificate <file>',
  describe:
    'Check a completeness certificate written by verify --certificate: its Ed25519 signature and, with --target, the SHA-256 of every target range it names, recomputed from the target alone. Exit 0 valid, 1 invalid (signature, altered file, changed or deleted target records).',
  builder: yargs =>
    withCommonArgs(yargs)
      .positional('file', { type: 'string', demandOption: true, describe: 'The certificate file.' })
      .option('public-key', {
        type: 'string',
        demandOption: true,
        describe: 'The Ed25519 public key (PEM, SPKI): openssl pkey -in signing.pem -pubout -out signing.pub',
      })
      .option('target', { type: 'string', describe: 'Target cluster brokers: re-read the certified ranges and recompute their digests.' })
      .option('target-command-config', { type: 'string', describe: 'Java client .properties for the target cluster.' })
      .example(
        '$0 certificate orders.cert.json --public-key signing.pub --target dst:9092',
        'Check the signature and the target records.'
      ) as unknown as Argv<CertificateArgs>,
  handler: certificateHandler,
}
