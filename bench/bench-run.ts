import type { LocalCluster } from '../scripts/local-kafka/clusters.js'
import type { TopicAdmin } from './topic-admin.js'

/** What every mode of a benchmark run shares: its id and work folder, the two clusters it copies between and an admin of each. */
export interface BenchRun {
  readonly id: string
  readonly workDir: string
  readonly source: LocalCluster
  readonly target: LocalCluster
  readonly sourceAdmin: TopicAdmin
  readonly targetAdmin: TopicAdmin
}
