import { compileTopicPattern } from './topic-filter.js'
import { parseChoice, ProblemList } from './values.js'

/**
 * MirrorMaker 2's default `config.properties.exclude` (`DefaultConfigPropertyFilter` in Apache
 * Kafka 4.x): throttles, timestamp type and bounds, unclean election and min.insync.replicas are
 * the target cluster's business. A LogAppendTime target topic would re-stamp every copied record.
 */
const DEFAULT_CONFIG_PROPERTIES_EXCLUDE = 'follower\\.replication\\.throttled\\.replicas, leader\\.replication\\.throttled\\.replicas, ' +
  'message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, unclean\\.leader\\.election\\.enable, min\\.insync\\.replicas'

/** The only `config.property.filter.class` honoured: MirrorMaker 2's default, configured by `config.properties.exclude`. */
const DEFAULT_CONFIG_PROPERTY_FILTER_CLASS = 'org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter'

/**
 * Tiered-storage topic keys, never copied whatever `config.properties.exclude` says: they describe
 * the source cluster's remote storage, and a target without it refuses the topic.
 */
function isTieredStorageKey (key: string): boolean {
  return key === 'remote.storage.enable' || key === 'local.retention.ms' || key === 'local.retention.bytes' || key.startsWith('remote.log.')
}

/**
 * Which topic configs a flow copies from a source topic to its target topic (MirrorMaker 2's
 * `DefaultConfigPropertyFilter`): every key except those matching `exclude` (a MirrorMaker
 * topic-list regex over the whole key; undefined excludes nothing) and the tiered-storage keys.
 */
export interface TopicConfigFilter {
  /** `config.properties.exclude` as written; default `DEFAULT_CONFIG_PROPERTIES_EXCLUDE`. */
  readonly exclude: string | undefined
  /**
   * `use.defaults.from`: `target` (default) copies only values not at their default on the source,
   * so the target's defaults stay; `source` also copies the source's default values.
   */
  readonly useDefaultsFrom: 'target' | 'source'
  copies: (key: string) => boolean
}

function createTopicConfigFilter (
  exclude: RegExp | undefined,
  excludeSource: string | undefined,
  useDefaultsFrom: 'target' | 'source' = 'target'
): TopicConfigFilter {
  return { exclude: excludeSource, useDefaultsFrom, copies: key => !isTieredStorageKey(key) && !(exclude?.test(key) ?? false) }
}

/** MirrorMaker 2's default filter, for flows whose configuration has no say (MirrorMaker 1 flags). */
const DEFAULT_EXCLUDE_PATTERN = compileTopicPattern('config.properties.exclude', DEFAULT_CONFIG_PROPERTIES_EXCLUDE, new ProblemList())
export const DEFAULT_TOPIC_CONFIG_FILTER: TopicConfigFilter = createTopicConfigFilter(DEFAULT_EXCLUDE_PATTERN, DEFAULT_CONFIG_PROPERTIES_EXCLUDE)

/** A key as read from a configuration: the full key it came from and its value. */
interface Entry { readonly key: string, readonly value: string }

/**
 * The filter of `config.properties.exclude`, `config.property.filter.class` and `use.defaults.from`
 * (MirrorMaker 2's keys). Only the default filter class runs here.
 */
export function parseTopicConfigFilter (
  exclude: Entry | undefined,
  filterClass: Entry | undefined,
  useDefaultsFrom: Entry | undefined,
  problems: ProblemList
): TopicConfigFilter {
  if (filterClass !== undefined) {
    const name = filterClass.value.trim()
    if (name !== DEFAULT_CONFIG_PROPERTY_FILTER_CLASS && name !== 'DefaultConfigPropertyFilter') {
      problems.add(
        filterClass.key,
        filterClass.value,
        `custom config filters (Java classes) cannot run here; remove the key or set ${DEFAULT_CONFIG_PROPERTY_FILTER_CLASS} and list keys in config.properties.exclude`
      )
    }
  }
  const from =
    useDefaultsFrom === undefined ? 'target' : (parseChoice(useDefaultsFrom.key, useDefaultsFrom.value, ['target', 'source'] as const, problems) ?? 'target')
  if (exclude === undefined) {
    return from === 'target' ? DEFAULT_TOPIC_CONFIG_FILTER : createTopicConfigFilter(DEFAULT_EXCLUDE_PATTERN, DEFAULT_CONFIG_PROPERTIES_EXCLUDE, from)
  }
  if (exclude.value.trim() === '') return createTopicConfigFilter(undefined, undefined, from)
  return createTopicConfigFilter(compileTopicPattern(exclude.key, exclude.value, problems), exclude.value, from)
}
