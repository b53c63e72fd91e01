/** The key of one partition of one topic in maps and sets (`topic\0partition`: topic names cannot hold NUL). */
export function partitionKey (topic: string, partition: number): string {
  return `${topic}\u0000${partition}`
}
