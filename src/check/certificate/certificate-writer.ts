import { writeFileSync } from 'node:fs'
import type { KeyObject } from 'node:crypto'
import type { AuditClient } from '../../kafka/audit-client.js'
import { packageVersion } from '../../shared/package-version.js'
import { UsageError } from '../cli/exit-codes.js'
import type { PartitionVerification } from '../verify/verification-report.js'
import { CERTIFICATE_FORMAT, type CertifiedRange, certificateText, readPrivateKey, signCertificate } from './completeness-certificate.js'
import { hashTargetRecords } from './target-records-hash.js'

/** `--certificate FILE --signing-key KEY` of `verify`, checked before anything connects. */
export interface CertificateRequest {
  readonly file: string
  readonly key: KeyObject
}

/** The certificate flags of a verify command line: both or neither; the key must be an Ed25519 private key. */
export function certificateRequest (args: { certificate?: string, 'signing-key'?: string, digests?: boolean }): CertificateRequest | undefined {
  const file = args.certificate
  const keyPath = args['signing-key']
  if (file === undefined && keyPath === undefined) return undefined
  if (file === undefined) {
    throw new UsageError('--signing-key needs --certificate FILE (where to write the signed certificate); add it or leave --signing-key out')
  }
  if (keyPath === undefined) {
    throw new UsageError(
      `--certificate "${file}" needs --signing-key KEY, an Ed25519 private key in PEM (openssl genpkey -algorithm ed25519 -out signing.pem)`
    )
  }
  if (args.digests === true) {
    throw new UsageError('--certificate and --digests exclude each other: a certificate is written after the record-level verify against the source; drop --digests')
  }
  return { file, key: readPrivateKey(keyPath) }
}

/**
 * After a passed record-level verify: writes a signed certificate naming both clusters, the
 * topic, and per partition the verified source range and the target range holding its copy, with
 * the SHA-256 of those target records. A partition's target range starts where the copy was read
 * from (its earliest copy) and holds the records the comparison matched (plus duplicates it was
 * allowed to pass); it ends before any record beyond the committed position. Returns the lines
 * to print on stderr.
 */
export async function writeVerifyCertificate (
  request: CertificateRequest,
  clients: { source: AuditClient, target: AuditClient },
  topics: { sourceTopic: string, targetTopic: string },
  partitions: readonly PartitionVerification[]
): Promise<string> {
  const ranges: CertifiedRange[] = []
  for (const p of partitions) {
    const targetFromOffset = p.earlierCopies?.fromTargetOffset ?? p.alignment.targetOffset
    const expected = p.counts.matched + p.counts.duplicated
    // The copy ends before the first record beyond the committed position; with none, at the target's end.
    const bound = p.beyondCommitted?.fromTargetOffset ??
      (await clients.target.listOffsets(topics.targetTopic, [p.alignment.targetPartition], 'latest')).get(p.alignment.targetPartition) ?? targetFromOffset
    const hashed = await hashTargetRecords(clients.target, topics.targetTopic, p.alignment.targetPartition, targetFromOffset, bound, expected)
    if (hashed.records !== expected) {
      throw new UsageError(
        `--certificate: target ${topics.targetTopic} partition ${p.alignment.targetPartition} holds ${hashed.records} records at offsets ${targetFromOffset}..${bound - 1}, the verify matched ${expected}: the target changed since it was read; no certificate written, run verify again`
      )
    }
    ranges.push({
      partition: p.partition,
      sourceFromOffset: p.sourceFromOffset,
      sourceUntilOffset: p.sourceUntilOffset,
      targetPartition: p.alignment.targetPartition,
      targetFromOffset,
      targetUntilOffset: hashed.untilOffset,
      records: hashed.records,
      sha256: hashed.sha256,
    })
  }
  const certificate = signCertificate(
    {
      format: CERTIFICATE_FORMAT,
      tool: { name: 'mirror-check', version: packageVersion() },
      issuedAt: new Date().toISOString(),
      verification: 'record-level',
      source: { bootstrapServers: clients.source.connection.brokers, clusterId: await clients.source.clusterId() },
      target: { bootstrapServers: clients.target.connection.brokers, clusterId: await clients.target.clusterId() },
      topics: [{ sourceTopic: topics.sourceTopic, targetTopic: topics.targetTopic, ranges }],
    },
    request.key
  )
  try {
    writeFileSync(request.file, certificateText(certificate))
  } catch (error) {
    throw new UsageError(`--certificate "${request.file}": cannot write it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a writable path`)
  }
  const records = ranges.reduce((n, r) => n + r.records, 0)
  return `certificate written to ${request.file}: ${records} target records in ${ranges.length} partition ranges of ${topics.targetTopic}, signed (ed25519 key ${certificate.signature.publicKeySha256.slice(0, 16)}...)`
}
