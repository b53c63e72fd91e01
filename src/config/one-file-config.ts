import { CONNECTION_KEYS, CONSUMER_KEYS, PRODUCER_KEYS } from './client-properties.js'
import { isSecurityKey } from './client-security.js'
import { isProviderKey } from './config-providers.js'
import type { Properties, PropertyEntry } from './java-properties.js'
import { buildMm1Config, MM1_FLAGS, type Mm1FlagName, type Mm1Values } from './mm1-args.js'
import type { MirrorConfig } from './mirror-config.js'
import type { SidecarSettings } from './sidecar-settings.js'
import { SIDECAR_FLAGS } from './sidecar-settings.js'
import type { ProblemList } from './values.js'

/**
 * The one-file form some MirrorMaker articles show: the source cluster's client keys at top level
 * (`bootstrap.servers`, `group.id`, security keys), the target's as `target.<key>`
 * (`target.bootstrap.servers`), `consumer.*` and `producer.*` for the two clients, and MirrorMaker
 * 1 flag names as keys (`whitelist`, `blacklist`, `num.streams`, ...):
 *
 * ```properties
 * bootstrap.servers=source-kafka:9092
 * target.bootstrap.servers=target-kafka:9092
 * group.id=mirror-maker-group
 * consumer.auto.offset.reset=earliest
 * producer.acks=all
 * whitelist=.*
 * ```
 *
 * It has no `clusters` key and it has `target.bootstrap.servers`.
 */
export function isOneFileForm (top: Properties): boolean {
  return !top.has('clusters') && top.has('target.bootstrap.servers')
}

/** Flags that can be keys of the file; the process-wide ones (metrics, logging, drain) stay flags. */
const FILE_FLAGS = (Object.keys(MM1_FLAGS) as Mm1FlagName[])
  .filter(flag => !(SIDECAR_FLAGS as readonly string[]).includes(flag) && !['consumer.config', 'producer.config', 'new.consumer'].includes(flag))

function isClientKey (name: string, roleKeys: readonly string[]): boolean {
  return (CONNECTION_KEYS as readonly string[]).includes(name) || isSecurityKey(name) || roleKeys.includes(name)
}

/**
 * The one-file form as MirrorMaker 1 would run it: one flow `source->target`, target topics named
 * as the source's, offset syncs in `mirror-offset-syncs.source.internal`. Precedence:
 * `consumer.<key>` over `<key>` for the source, `producer.<key>` over `target.<key>` for the target.
 */
export function configFromOneFile (
  path: string,
  top: Properties,
  settings: SidecarSettings,
  clusters: readonly string[] | undefined,
  problems: ProblemList
): MirrorConfig {
  if (clusters !== undefined) {
    problems.add(
      '--clusters',
      clusters.join(','),
      `${path} names no clusters (it is the one-file form: source at top level, target as target.*); drop --clusters`
    )
  }
  const source = new Map<string, PropertyEntry>()
  const target = new Map<string, PropertyEntry>()
  const values: Mm1Values = {}
  for (const [key, entry] of top) {
    if ((FILE_FLAGS as string[]).includes(key)) {
      values[key as Mm1FlagName] = entry.value
      continue
    }
    if (isProviderKey(key)) continue
    const [view, name, roleKeys] = key.startsWith('consumer.')
      ? [source, key.slice('consumer.'.length), CONSUMER_KEYS]
      : key.startsWith('producer.')
        ? [target, key.slice('producer.'.length), PRODUCER_KEYS]
        : key.startsWith('target.')
          ? [target, key.slice('target.'.length), PRODUCER_KEYS]
          : [source, key, CONSUMER_KEYS]
    if (!isClientKey(name, roleKeys) && name.toLowerCase() !== 'groupid' && !/^(zk|zookeeper)\.connect$/i.test(name)) {
      problems.ignore(key)
      continue
    }
    // consumer.<key> and producer.<key> win over the plain and target. keys.
    if (key.startsWith('consumer.') || key.startsWith('producer.') || !view.has(name)) view.set(name, entry)
  }
  const where = `${path}: `
  return buildMm1Config(values, problems, {
    flagKey: flag => `${where}${flag}`,
    settings,
    clients: () => ({
      producer: { properties: target, where: `${where}target.`, bootstrapHint: `(set target.bootstrap.servers in ${path})`, reportUnused: false },
      consumers: [{ properties: source, where, bootstrapHint: `(set bootstrap.servers in ${path})`, reportUnused: false }],
    }),
  })
}
