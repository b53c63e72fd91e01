import type { ClusterConnection } from '../../config/cluster-connection.js'

/** The topic configs compared between a source topic and its existing target topic. */
export const SETTING_KEYS: readonly string[] = ['max.message.bytes', 'cleanup.policy', 'message.timestamp.type']

/** An existing target topic whose setting will refuse records of its source, or change them; `fix` is the command that sets it right. */
export interface SettingProblem {
  readonly sourceTopic: string
  readonly targetTopic: string
  readonly key: string
  readonly sourceValue: string | undefined
  readonly targetValue: string
  readonly problem: string
  readonly fix: string
}

/**
 * What in the target topic's settings refuses or changes what the source holds:
 * `max.message.bytes` below the source's (a batch the source took is refused, RECORD_TOO_LARGE),
 * `cleanup.policy` with `compact` where the source only deletes (a record without a key is
 * refused, and compaction removes older values of a key the source keeps),
 * `message.timestamp.type=LogAppendTime` (the target stamps its own time: the source's
 * timestamps are lost, and a batch with the LogAppendTime bit set is refused).
 * Settings not read (no DescribeConfigs right) are not compared.
 */
export function settingProblems (
  pair: { readonly source: string, readonly target: string },
  source: Readonly<Record<string, string>> | undefined,
  target: Readonly<Record<string, string>> | undefined,
  targetCluster: ClusterConnection
): SettingProblem[] {
  if (source === undefined || target === undefined) return []
  const problems: SettingProblem[] = []
  const fix = (key: string, value: string): string =>
    `kafka-configs --bootstrap-server ${targetCluster.brokers.join(',')} --alter --entity-type topics --entity-name ${pair.target} --add-config ${key}=${value}`
  const base = { sourceTopic: pair.source, targetTopic: pair.target }
  const sourceMax = Number(source['max.message.bytes'])
  const targetMax = Number(target['max.message.bytes'])
  if (Number.isFinite(sourceMax) && Number.isFinite(targetMax) && targetMax < sourceMax) {
    problems.push({
      ...base,
      key: 'max.message.bytes',
      sourceValue: String(sourceMax),
      targetValue: String(targetMax),
      problem: "below the source's: a batch the source took can be refused (RECORD_TOO_LARGE)",
      fix: fix('max.message.bytes', String(sourceMax)),
    })
  }
  const policies = (value: string | undefined): string[] => (value ?? 'delete').split(',').map(p => p.trim())
  if (policies(target['cleanup.policy']).includes('compact') && !policies(source['cleanup.policy']).includes('compact')) {
    problems.push({
      ...base,
      key: 'cleanup.policy',
      sourceValue: source['cleanup.policy'] ?? 'delete',
      targetValue: target['cleanup.policy'] ?? '',
      problem: 'compact where the source deletes: a record without a key is refused, older values of a key are removed',
      fix: fix('cleanup.policy', source['cleanup.policy'] ?? 'delete'),
    })
  }
  if (target['message.timestamp.type'] === 'LogAppendTime') {
    problems.push({
      ...base,
      key: 'message.timestamp.type',
      sourceValue: source['message.timestamp.type'],
      targetValue: 'LogAppendTime',
      problem: "the target stamps its own time: the source's timestamps are lost and a batch with the LogAppendTime bit is refused",
      fix: fix('message.timestamp.type', 'CreateTime'),
    })
  }
  return problems
}
