import type { ProblemList } from './values.js'
import { parseBoolean } from './values.js'

/**
 * Pass-through (MirrorMaker 1's shallow iteration): fetched record batches go to the target as
 * bytes, undecoded. `auto` (the default) forwards every batch that can be forwarded safely and
 * decodes the rest; `on` is the same but a flow that must decode every record (a message handler)
 * is a configuration error instead of a silent switch; `off` decodes every record.
 */
const PassThroughModes = ['auto', 'on', 'off'] as const
export type PassThroughMode = typeof PassThroughModes[number]

export const DEFAULT_PASS_THROUGH: PassThroughMode = 'auto'

/** `--pass.through` / mm2.properties `pass.through`: auto, on or off (true and false are on and off). */
export function parsePassThrough (key: string, raw: string | undefined, problems: ProblemList): PassThroughMode | undefined {
  if (raw === undefined) return undefined
  const value = raw.trim().toLowerCase()
  if ((PassThroughModes as readonly string[]).includes(value)) return value as PassThroughMode
  if (value === 'true') return 'on'
  if (value === 'false') return 'off'
  problems.add(key, raw, 'expected auto, on or off (true and false mean on and off)')
  return undefined
}

/** MirrorMaker 0.7's consumer key `shallowiterator.enable`: true is on, false is off. */
export function parseShallowIterator (key: string, raw: string | undefined, problems: ProblemList): PassThroughMode | undefined {
  const enabled = parseBoolean(key, raw, problems)
  return enabled === undefined ? undefined : enabled ? 'on' : 'off'
}

/**
 * The mode of a flow from the flag (or mm2.properties key) and the consumer file's
 * `shallowiterator.enable`: either alone decides; both must agree.
 */
export function resolvePassThrough (
  flag: { key: string, value: PassThroughMode | undefined },
  shallow: { key: string, value: PassThroughMode | undefined },
  problems: ProblemList
): PassThroughMode {
  if (flag.value !== undefined && shallow.value !== undefined && flag.value !== shallow.value && !(flag.value === 'auto')) {
    problems.add(shallow.key, shallow.value === 'on' ? 'true' : 'false', `contradicts ${flag.key}=${flag.value}; remove one of them`)
  }
  return flag.value === undefined || flag.value === 'auto' ? (shallow.value ?? flag.value ?? DEFAULT_PASS_THROUGH) : flag.value
}
