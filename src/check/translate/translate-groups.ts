import type { ClusterConnection } from '../../config/cluster-connection.js'
import { GroupAdmin, type PartitionLogOffsets } from '../../kafka/group-admin.js'
import { silentLogger, type Logger } from '../../shared/logger.js'
import { loadOffsetSyncs } from './offset-sync-store.js'
import { translateCommittedOffsets, withoutForeignPrefix, type GroupTranslationRow } from './translate-group.js'

export interface TranslateGroupsOptions {
  readonly source: ClusterConnection
  readonly target: ClusterConnection
  readonly groups: readonly string[]
  /** Only this source topic; default every topic each group committed on. */
  readonly topic?: string
  /** The offset-syncs topic on the target. */
  readonly offsetSyncsTopic: string
  readonly logger?: Logger
}

/**
 * `translateGroupOffsets` for many groups in one pass: the offset syncs are read once for all of
 * them, each group's committed offsets are one OffsetFetch (several in flight), and each target
 * topic's log offsets are read once. Rows by group (in the order given), then topic and partition.
 */
export async function translateManyGroups (options: TranslateGroupsOptions): Promise<GroupTranslationRow[]> {
  const logger = options.logger ?? silentLogger
  const syncs = await loadOffsetSyncs(options.target, options.offsetSyncsTopic, logger)
  const source = new GroupAdmin(options.source, logger)
  await source.start()
  let committed
  try {
    committed = await source.committedOffsetsOfGroups(options.groups, options.topic === undefined ? undefined : [options.topic])
  } finally {
    await source.stop()
  }
  const target = new GroupAdmin(options.target, logger)
  await target.start()
  try {
    const logs = new Map<string, Promise<ReadonlyMap<number, PartitionLogOffsets>>>()
    const logOffsetsOf = async (topic: string): Promise<ReadonlyMap<number, PartitionLogOffsets>> => {
      let log = logs.get(topic)
      if (log === undefined) logs.set(topic, (log = target.logOffsets(topic)))
      return await log
    }
    const rows: GroupTranslationRow[] = []
    for (const group of options.groups) {
      rows.push(...(await withoutForeignPrefix(translateCommittedOffsets(group, committed.get(group) ?? [], syncs), syncs, logOffsetsOf)))
    }
    return rows
  } finally {
    await target.stop()
  }
}
