import type { ProblemList } from './values.js'

/**
 * MirrorMaker's topic list semantics: a Java regex where a comma means "or", matched against the
 * whole topic name (`orders.*,payments` matches `orders-eu` and `payments`, not `payments-v2`).
 */
export interface TopicFilter {
  readonly include: string
  readonly exclude: string | undefined
  matches: (topic: string) => boolean
}

/** Topics the mirror never copies: Kafka internals and the mirror's own bookkeeping topics. */
export function isInternalTopic (topic: string): boolean {
  return topic.startsWith('__') || /^mirror-(offset-syncs|checkpoints|producers|digests)\..*\.internal$/.test(topic) ||
    /^mm2-(offset-syncs|configs|offsets|status)\..*/.test(topic) || /\.checkpoints\.internal$/.test(topic) ||
    /^(mm2-|connect-)(configs|offsets|status)$/.test(topic) || topic.endsWith('.heartbeats')
}

/**
 * MirrorMaker 2's rule for its heartbeats topic (`MirrorSourceConnector.shouldReplicateTopic`): the
 * source's `heartbeats` is copied whatever `topics` and `topics.exclude` say, as
 * `<source alias>.heartbeats` under every replication policy (`targetTopicName`), so the target
 * learns its upstream clusters from it.
 */
export function withHeartbeatsTopic (filter: TopicFilter, heartbeatsTopic: string): TopicFilter {
  return { include: filter.include, exclude: filter.exclude, matches: topic => topic === heartbeatsTopic || filter.matches(topic) }
}

/**
 * Turns a MirrorMaker topic list into a JavaScript regex. Java and JavaScript regex syntax agree on
 * what topic lists use (classes, groups, quantifiers, alternation); Java-only constructs are refused.
 */
export function compileTopicPattern (key: string, pattern: string, problems: ProblemList): RegExp | undefined {
  const trimmed = pattern.trim()
  if (trimmed === '') {
    problems.add(key, pattern, 'expected a topic regex such as "orders.*,payments"')
    return undefined
  }
  // MirrorMaker replaces ',' with '|' and trims spaces around the parts.
  const alternatives = trimmed.split(',').map(part => part.trim()).filter(part => part !== '')
  const javaOnly = /\\[QEZzAG]|\(\?[a-zA-Z]+[):]|[*+?}]\+|\\p\{java/
  for (const part of alternatives) {
    if (javaOnly.test(part)) {
      problems.add(key, pattern, `"${part}" uses Java-only regex syntax; rewrite it without possessive quantifiers, \\Q..\\E, inline flags or nested classes`)
      return undefined
    }
  }
  try {
    return new RegExp(`^(?:${alternatives.join('|')})$`, 'u')
  } catch (error) {
    problems.add(key, pattern, `not a valid regex (${(error as Error).message.replace(/^Invalid regular expression: /, '')}); check brackets and escapes`)
    return undefined
  }
}

export function createTopicFilter (include: RegExp, exclude: RegExp | undefined, includeSource: string, excludeSource: string | undefined): TopicFilter {
  return {
    include: includeSource,
    exclude: excludeSource,
    matches: topic => !isInternalTopic(topic) && include.test(topic) && !(exclude?.test(topic) ?? false),
  }
}

/** MirrorMaker 2's default `groups.exclude`. */
export const DEFAULT_GROUPS_EXCLUDE = 'console-consumer-.*, connect-.*, __.*'

/** A group filter from compiled patterns (see `compileTopicPattern`; the syntax is the same). */
export function createGroupFilter (
  include: RegExp,
  exclude: RegExp | undefined,
  includeSource: string,
  excludeSource: string | undefined
): { include: string, exclude: string | undefined, matches: (groupId: string) => boolean } {
  return { include: includeSource, exclude: excludeSource, matches: id => include.test(id) && !(exclude?.test(id) ?? false) }
}
