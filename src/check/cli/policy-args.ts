import type { Argv } from 'yargs'
import { ReplicationPolicyKinds, type ReplicationPolicy, type ReplicationPolicyKind } from '../../config/mirror-config.js'

/** The flags naming the target topic of a source topic, as MirrorMaker 2's replication policy does. */
export interface PolicyArgs {
  'replication-policy': ReplicationPolicyKind
  'source-alias': string
  separator: string
}

export function withPolicyArgs<T> (yargs: Argv<T>): Argv<T & PolicyArgs> {
  return yargs
    .option('replication-policy', {
      choices: ReplicationPolicyKinds,
      default: 'identity' as ReplicationPolicyKind,
      describe: 'Target topic naming: identity (same name) or default (<source-alias><separator><topic>), as MirrorMaker 2.',
    })
    .option('source-alias', { type: 'string', default: 'source', describe: 'Source cluster alias for the default replication policy.' })
    .option('separator', { type: 'string', default: '.', describe: 'replication.policy.separator for the default policy.' }) as Argv<T & PolicyArgs>
}

/** The replication policy that `--replication-policy` and `--separator` name. */
export function policyFromArgs (args: PolicyArgs): ReplicationPolicy {
  return args['replication-policy'] === 'identity' ? { kind: 'identity' } : { kind: 'default', separator: args.separator }
}
