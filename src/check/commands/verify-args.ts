import type { Argv } from 'yargs'
import { nonNegativeNumber, positiveInteger } from '../cli/cluster-args.js'
import type { ClusterPairArgs, CommonArgs } from '../cli/cluster-args.js'
import type { PolicyArgs } from '../cli/policy-args.js'

/** The flags of `mirror-check verify` (plain and `--digests`). */
export interface VerifyArgs extends CommonArgs, PolicyArgs, ClusterPairArgs {
  topic: string
  'target-topic'?: string
  partition?: number[]
  'from-offset'?: number
  'from-time'?: string
  'to-offset'?: number
  'until-mirrored': boolean
  group: string
  wait?: number
  'allow-duplicates': boolean
  'allow-in-flight': boolean
  digest: boolean
  'digest-range-records': number
  'lookahead-records': number
  'max-findings': number
  'offset-syncs': boolean
  'offset-syncs-topic'?: string
  digests: boolean
  'digests-topic'?: string
  certificate?: string
  'signing-key'?: string
}

/** The flags of plain `verify` that choose what is compared: the topics, partitions and offset range, the mirror's group, the wait. */
export function withVerifyRangeArgs (yargs: Argv<object>): Argv<object> {
  return yargs
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
}

/** The flags that judge and report: what passes, how the copy is compared and aligned, digests, the certificate. */
export function withVerifyCheckArgs (yargs: Argv<object>): Argv<object> {
  return yargs
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
}
