/** The key of one partition of one topic in maps and sets (`topic\0partition`: topic names cannot hold NUL). */
export function partitionKey (topic: string, partition: number): string {
  return `${topic}\u0000${partition}`
}

/** The topic and partition of a `partitionKey`. */
export function parsePartitionKey (key: string): { topic: string, partition: number } {
  const cut = key.lastIndexOf('\u0000')
  return { topic: key.slice(0, cut), partition: Number(key.slice(cut + 1)) }
}
