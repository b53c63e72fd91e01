/**
 * The bucket of a source partition with exactly-once: `(hash(topic) + partition) mod buckets`,
 * the same in every process of a flow. A bucket is the unit of ownership: the source group's
 * assignor gives all partitions of a bucket to one member, and the bucket's producer lane writes
 * them in transactions under one transactional id.
 */
export function bucketOf (topic: string, partition: number, buckets: number): number {
  let hash = 0
  // Java's String.hashCode: stable across processes and versions.
  for (let i = 0; i < topic.length; i++) hash = (Math.imul(hash, 31) + topic.charCodeAt(i)) | 0
  return (((hash % buckets) + buckets) % buckets + partition) % buckets
}
