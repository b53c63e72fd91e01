import type { Properties } from './java-properties.js'
import type { ProblemList } from './values.js'

/** Keys of MirrorMaker 0.7/0.8 client files that pointed at ZooKeeper or at brokers by an old name. */
const ZOOKEEPER_KEYS = ['zk.connect', 'zookeeper.connect']
const OLD_BROKER_LIST_KEYS = ['metadata.broker.list', 'broker.list']

/** A key of `properties` equal to one of `names` ignoring case, as a pasted `Groupid=` is still meant as `groupid`. */
function find (properties: Properties, names: readonly string[]): { key: string, value: string } | undefined {
  for (const [key, entry] of properties) {
    if (names.includes(key.toLowerCase())) return { key, value: entry.value }
  }
  return undefined
}

/**
 * Client files written for MirrorMaker 0.7/0.8 (`zk.connect`, `zookeeper.connect`, `groupid`,
 * `metadata.broker.list`) when the current key is missing: one problem each that says what to
 * write instead. A ZooKeeper address is reported under `bootstrap.servers`, so the generic
 * "bootstrap.servers: missing" line is not printed as well.
 *
 * @param where how keys are named in messages, e.g. `source.properties: `
 * @param alias the cluster the file connects to, for the message
 */
export function checkLegacyClientKeys (properties: Properties, where: string, alias: string, problems: ProblemList): void {
  if (!properties.has('bootstrap.servers')) {
    const zookeeper = find(properties, ZOOKEEPER_KEYS)
    const brokerList = find(properties, OLD_BROKER_LIST_KEYS)
    if (brokerList !== undefined) {
      problems.add(
        `${where}bootstrap.servers`,
        undefined,
        `missing; ${brokerList.key} is the MirrorMaker 0.8 name: write bootstrap.servers=${brokerList.value}`
      )
    } else if (zookeeper !== undefined) {
      problems.add(
        `${where}bootstrap.servers`,
        undefined,
        `missing; ${zookeeper.key}=${zookeeper.value} is a ZooKeeper address (MirrorMaker 0.7/0.8) and Kafka 4 has no ZooKeeper: replace it with bootstrap.servers=<the ${alias} cluster's brokers, host:port,...>`
      )
    }
  }
  const groupid = find(properties, ['groupid'])
  if (groupid !== undefined && !properties.has('group.id')) {
    problems.add(`${where}${groupid.key}`, groupid.value, `is the MirrorMaker 0.7 name of group.id; write group.id=${groupid.value}`)
  }
}
