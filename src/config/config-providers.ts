import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { PropertyEntry } from './java-properties.js'
import { ConfigError } from '../shared/errors.js'
import { parseProperties } from './java-properties.js'
import type { ProblemList } from './values.js'

/** Kafka's built-in config providers, by class name; the sidecar implements these three. */
const PROVIDER_CLASSES = {
  'org.apache.kafka.common.config.provider.EnvVarConfigProvider': 'env',
  'org.apache.kafka.common.config.provider.FileConfigProvider': 'file',
  'org.apache.kafka.common.config.provider.DirectoryConfigProvider': 'dir',
} as const

type ProviderKind = typeof PROVIDER_CLASSES[keyof typeof PROVIDER_CLASSES]

// Kafka's ConfigTransformer pattern: ${provider:[path:]key}.
const REFERENCE = /\$\{([^}]*?):(?:([^}]*?):)?([^}]*?)\}/g

/** True for `config.providers` and `config.providers.<name>.class|param.*`: read here, not client keys. */
export function isProviderKey (key: string): boolean {
  return key === 'config.providers' || key.startsWith('config.providers.')
}

/**
 * Which provider names are usable: those declared in `config.providers` with a known class, plus
 * `env`, `file` and `dir` (Kafka's usual names) even when not declared, since an unresolved
 * `${env:...}` would only ever fail later as a wrong password.
 */
function providerNames (entries: ReadonlyMap<string, PropertyEntry>, where: string, problems: ProblemList): Map<string, ProviderKind> {
  const names = new Map<string, ProviderKind>([['env', 'env'], ['file', 'file'], ['dir', 'dir']])
  const declared = entries.get('config.providers')?.value
  if (declared === undefined) return names
  for (const name of declared.split(',').map(s => s.trim()).filter(s => s !== '')) {
    const classKey = `config.providers.${name}.class`
    const className = entries.get(classKey)?.value.trim()
    if (className === undefined) {
      problems.add(
        `${where}${classKey}`,
        undefined,
        `missing for provider "${name}" named in config.providers; set it to ${Object.keys(PROVIDER_CLASSES).join(' or ')}`
      )
      continue
    }
    const kind = PROVIDER_CLASSES[className as keyof typeof PROVIDER_CLASSES]
    if (kind === undefined) {
      problems.add(`${where}${classKey}`, className, `custom config providers (Java classes) cannot run here; use ${Object.keys(PROVIDER_CLASSES).join(', ')}`)
      continue
    }
    names.set(name, kind)
  }
  return names
}

function lookUp (kind: ProviderKind, path: string | undefined, key: string): { value: string } | { error: string } {
  if (kind === 'env') {
    const value = process.env[key]
    return value === undefined ? { error: `environment variable ${key} is not set; export it or change the reference` } : { value }
  }
  if (path === undefined || path === '') return { error: `needs a path: \${${kind}:/path/to/file:${key}}` }
  try {
    if (kind === 'dir') return { value: readFileSync(join(path, key), 'utf8') }
    const value = parseProperties(readFileSync(path, 'utf8'), path).get(key)?.value
    return value === undefined ? { error: `key ${key} is not in ${path}; add it there or fix the reference` } : { value }
  } catch (error) {
    if (error instanceof ConfigError) return { error: error.message }
    return {
      error: `cannot read ${kind === 'dir' ? join(path, key) : path} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the path and its permissions`,
    }
  }
}

/**
 * Replaces `${env:NAME}`, `${file:/path.properties:key}` and `${dir:/path:file}` references in
 * every value, as Kafka's EnvVarConfigProvider, FileConfigProvider and DirectoryConfigProvider
 * do. A resolved entry keeps the original text in `reference`, so it can be shown instead of the
 * secret. Unknown provider names are left as they are (Kafka does the same).
 */
export function resolveConfigProviders (entries: ReadonlyMap<string, PropertyEntry>, where: string, problems: ProblemList): Map<string, PropertyEntry> {
  const names = providerNames(entries, where, problems)
  const resolved = new Map<string, PropertyEntry>()
  for (const [key, entry] of entries) {
    if (isProviderKey(key) || !entry.value.includes('${')) { resolved.set(key, entry); continue }
    let failed = false
    const value = entry.value.replace(REFERENCE, (whole, provider: string, path: string | undefined, name: string) => {
      const kind = names.get(provider)
      if (kind === undefined) return whole
      const found = lookUp(kind, path, name)
      if ('error' in found) {
        problems.add(`${where}${key}`, whole, found.error)
        failed = true
        return whole
      }
      return found.value
    })
    resolved.set(key, failed || value === entry.value ? entry : { ...entry, value, reference: entry.value })
  }
  return resolved
}
