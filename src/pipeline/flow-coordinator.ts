import { partitionKey } from './partition-key.js'

/**
 * The partition whose owner coordinates a flow: partition 0 of the first mirrored source topic
 * by name. Every process of the flow subscribes to the same topics, so they agree on it without
 * talking to each other, and the source group's assignment decides who owns it: one process at a
 * time, and another one after a rebalance when it leaves or dies (within the session timeout).
 * The coordinator runs the flow-wide jobs that must not run in every process: group offset sync
 * and checkpoints, and offset-sync pruning. Undefined while no topic is mirrored.
 */
export function coordinatorPartition (sourceTopics: Iterable<string>): string | undefined {
  let first: string | undefined
  for (const topic of sourceTopics) if (first === undefined || topic < first) first = topic
  return first === undefined ? undefined : partitionKey(first, 0)
}
