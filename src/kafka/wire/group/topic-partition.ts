/** One partition of one topic, by name. */
export interface TopicPartition {
  readonly topic: string
  readonly partition: number
}

/** The text key of a partition (`topic:partition`), unique per partition (a topic name holds no ':'). */
export function partitionKey ({ topic, partition }: TopicPartition): string {
  return `${topic}:${partition}`
}

/** Partitions in topic then partition order, a copy. */
export function sortPartitions (partitions: Iterable<TopicPartition>): TopicPartition[] {
  return [...partitions].sort((a, b) => a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition)
}

/** Partitions grouped by topic (each topic's partitions in ascending order), topics in name order. */
export function partitionsByTopic (partitions: Iterable<TopicPartition>): Array<{ topic: string, partitions: number[] }> {
  const byTopic = new Map<string, number[]>()
  for (const { topic, partition } of sortPartitions(partitions)) {
    const list = byTopic.get(topic) ?? []
    list.push(partition)
    byTopic.set(topic, list)
  }
  return [...byTopic].map(([topic, list]) => ({ topic, partitions: list }))
}

/** The partitions of `a` that are not in `b`, in `a`'s order. */
export function partitionsMissingFrom (a: Iterable<TopicPartition>, b: Iterable<TopicPartition>): TopicPartition[] {
  const keys = new Set([...b].map(partitionKey))
  return [...a].filter(p => !keys.has(partitionKey(p)))
}
