import type { ClusterConnection } from '../../config/cluster-connection.js'
import { readInternalTopic } from '../../kafka/internal-topic.js'
import { silentLogger, type Logger } from '../../shared/logger.js'
import { OffsetSyncIndex, translateOffset, type Translation } from '../../mirror-topics/offset-sync-index.js'
import { decodeOffsetSync } from '../../mirror-topics/offset-sync-record.js'

export { OffsetSyncIndex, translateOffset, type Translation }

/** Default name of the offset-syncs topic of a flow whose source cluster has alias `sourceAlias`. */
export function offsetSyncsTopicName (sourceAlias: string): string {
  return `mirror-offset-syncs.${sourceAlias}.internal`
}

/**
 * Reads the whole offset-syncs topic from the target cluster into an index, once. A missing topic
 * gives an empty index (every translation then says `no-syncs`).
 */
export async function loadOffsetSyncs (target: ClusterConnection, topic: string, logger: Logger = silentLogger): Promise<OffsetSyncIndex> {
  const index = new OffsetSyncIndex()
  await readInternalTopic(target, topic, (key, value) => {
    const entry = decodeOffsetSync(key, value)
    if (entry !== undefined) index.apply(entry)
  }, logger)
  return index
}
