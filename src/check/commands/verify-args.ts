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
