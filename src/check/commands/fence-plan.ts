import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import type { TopicAclBinding } from '../../kafka/fence-admin.js'
import { UsageError } from '../cli/exit-codes.js'

/** The wildcard principal: a DENY for it would deny the mirror too (DENY beats ALLOW, super users aside). */
const EVERY_PRINCIPAL = 'User:*'

/** Operations whose ALLOW lets a principal produce to a topic. */
const WRITING = new Set(['WRITE', 'ALL'])

/** One DENY WRITE the fence holds: `exists` when the same binding was there before (then it is neither created nor removed). */
export interface FenceAcl {
  readonly binding: TopicAclBinding
  readonly exists: boolean
}

/** What `mirror-check fence` would do on the topics it fences. */
export interface FencePlan {
  /** Per topic and application principal, the DENY WRITE binding (literal topic, every host). */
  readonly acls: readonly FenceAcl[]
  /** ALLOW WRITE (or ALL) bindings for `User:*` on the topics: principals not named keep writing through them. */
  readonly wildcardAllows: readonly TopicAclBinding[]
  /** Topics on which no principal besides the allowed ones is known to write. */
  readonly unfenced: readonly string[]
}

export function denyWrite (topic: string, principal: string): TopicAclBinding {
  return { resourceName: topic, patternType: 'LITERAL', principal, host: '*', operation: 'WRITE', permission: 'DENY' }
}

const sameBinding = (a: TopicAclBinding, b: TopicAclBinding): boolean =>
  a.resourceName === b.resourceName && a.patternType === b.patternType && a.principal === b.principal && a.host === b.host &&
  a.operation === b.operation && a.permission === b.permission

/**
 * The fence of `topics`: a DENY WRITE per topic for every principal that holds an ALLOW WRITE or
 * ALL on it (literal, prefixed or wildcard resource) and for every `deny` principal, except the
 * `allow` principals (the mirror's). Invariant: no DENY names `User:*` or an allowed principal, so
 * the mirror keeps every right it has. Pure: `acls` are the bindings DescribeAcls gave per topic.
 */
export function planFence (
  topics: readonly string[],
  acls: ReadonlyMap<string, readonly TopicAclBinding[]>,
  allow: readonly string[],
  deny: readonly string[]
): FencePlan {
  const allowed = new Set(allow)
  const planned: FenceAcl[] = []
  const wildcardAllows: TopicAclBinding[] = []
  const unfenced: string[] = []
  for (const topic of topics) {
    const existing = acls.get(topic) ?? []
    const writers = new Set<string>()
    for (const binding of existing) {
      if (binding.permission !== 'ALLOW' || !WRITING.has(binding.operation)) continue
      if (binding.principal === EVERY_PRINCIPAL) wildcardAllows.push(binding)
      else writers.add(binding.principal)
    }
    for (const principal of deny) writers.add(principal)
    const fenced = [...writers].filter(p => !allowed.has(p)).sort()
    if (fenced.length === 0) unfenced.push(topic)
    for (const principal of fenced) {
      const binding = denyWrite(topic, principal)
      planned.push({ binding, exists: existing.some(b => sameBinding(b, binding)) })
    }
  }
  return { acls: planned, wildcardAllows, unfenced }
}

/** Flags that cannot make a fence: one line each, before anything connects. */
export function checkPrincipals (allow: readonly string[], deny: readonly string[]): void {
  for (const [flag, principals] of [['--allow-principal', allow], ['--deny-principal', deny]] as const) {
    for (const p of principals) {
      if (!/^[A-Za-z]+:.+$/.test(p)) throw new UsageError(`${flag} "${p}": expected a principal such as User:mirror`)
    }
  }
  if (deny.includes(EVERY_PRINCIPAL)) {
    throw new UsageError(`--deny-principal "${EVERY_PRINCIPAL}": a DENY for every principal denies the mirror too (DENY beats ALLOW); name each application principal`)
  }
  const both = deny.find(p => allow.includes(p))
  if (both !== undefined) throw new UsageError(`--deny-principal "${both}": also given with --allow-principal; give it once`)
  if (allow.length === 0) throw new UsageError('--allow-principal: missing; name the mirror\'s principal (e.g. User:mirror), which keeps writing')
}

/** The state file of a fence: the bindings it created on a cluster, so `--rollback` removes exactly those. */
export interface FenceState {
  readonly v: 1
  readonly bootstrap: string
  readonly createdAt: string
  readonly acls: readonly TopicAclBinding[]
}

export function writeFenceState (path: string, state: FenceState): void {
  // Written whole, then renamed: a crash leaves the old file or the new one, never half of one.
  writeFileSync(`${path}.tmp`, JSON.stringify(state, null, 2) + '\n')
  renameSync(`${path}.tmp`, path)
}

export function readFenceState (path: string): FenceState {
  if (!existsSync(path)) {
    throw new UsageError(`--state-file "${path}": no such file; give the file the fence wrote (--execute), nothing to roll back without it`)
  }
  let state: FenceState
  try {
    state = JSON.parse(readFileSync(path, 'utf8')) as FenceState
  } catch {
    throw new UsageError(`--state-file "${path}": not the JSON a fence writes; give the file the fence wrote`)
  }
  if (state?.v !== 1 || !Array.isArray(state.acls)) {
    throw new UsageError(`--state-file "${path}": not the JSON a fence writes; give the file the fence wrote`)
  }
  return state
}
