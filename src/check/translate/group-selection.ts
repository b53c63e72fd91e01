import { compileTopicPattern, DEFAULT_GROUPS_EXCLUDE } from '../../config/topic-filter.js'
import { ProblemList } from '../../config/values.js'
import { ConfigError } from '../../shared/errors.js'
import { UsageError } from '../cli/exit-codes.js'

/**
 * Groups `--group-regex` and `--all-groups` leave out by default: MirrorMaker 2's `groups.exclude`
 * plus the sidecar's default `group.id` (its own group on the source).
 */
export const DEFAULT_SELECTION_EXCLUDE = `${DEFAULT_GROUPS_EXCLUDE}, mirror-sidecar`

/** The flags that select consumer groups by name: `--group` (repeatable), `--group-regex` (alias `--groups`), `--all-groups`, `--groups-exclude`. */
export interface GroupSelectionArgs {
  group?: string[] | string
  'group-regex'?: string
  groups?: string
  'all-groups'?: boolean
  'groups-exclude'?: string
}

/**
 * Which groups a command works on, checked before anything connects: the named ones, and every
 * consumer group on the cluster read whose whole name matches `pattern` (MirrorMaker list syntax,
 * `--all-groups` is `.*`) and not `exclude`. Named groups are never excluded.
 */
export interface GroupSelection {
  readonly named: readonly string[]
  readonly pattern?: RegExp
  readonly exclude?: RegExp
  /** The flag and value that gave `pattern`, for messages. */
  readonly patternSource?: string
}

export function groupSelection (args: GroupSelectionArgs): GroupSelection {
  const named = [...new Set(args.group === undefined ? [] : Array.isArray(args.group) ? args.group : [args.group])]
  for (const group of named) if (group.trim() === '') throw new UsageError('--group "": expected a consumer group name')
  // yargs sets both names of an aliased flag; --group-regex is the one shown.
  const regex = args['group-regex'] ?? args.groups
  const all = args['all-groups'] === true
  if (all && regex !== undefined) throw new UsageError('--all-groups and --group-regex exclude each other; give --all-groups for every group, or the regex')
  if (named.length === 0 && regex === undefined && !all) {
    throw new UsageError('--group, --group-regex or --all-groups is required; name the consumer group(s)')
  }
  const problems = new ProblemList()
  const pattern = all ? /^.*$/u : regex === undefined ? undefined : compileTopicPattern('--group-regex', regex, problems)
  const excludeText = args['groups-exclude'] ?? ''
  const exclude = excludeText.trim() === '' ? undefined : compileTopicPattern('--groups-exclude', excludeText, problems)
  if (!problems.empty) throw new ConfigError(problems.problems)
  return {
    named,
    ...(pattern === undefined ? {} : { pattern, patternSource: all ? '--all-groups' : `--group-regex "${regex as string}"` }),
    ...(exclude === undefined ? {} : { exclude }),
  }
}

/** The named groups, then every listed group the selection's pattern takes (sorted, each once). */
export function selectGroups (selection: GroupSelection, listed: readonly string[]): string[] {
  const out = [...selection.named]
  if (selection.pattern === undefined) return out
  const pattern = selection.pattern
  for (const group of [...listed].sort()) {
    if (pattern.test(group) && !(selection.exclude?.test(group) ?? false) && !out.includes(group)) out.push(group)
  }
  return out
}
