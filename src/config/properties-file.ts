import { readFileSync } from 'node:fs'
import { ConfigError } from '../shared/errors.js'
import { resolveConfigProviders } from './config-providers.js'
import { parseProperties, type PropertyEntry } from './java-properties.js'
import { ProblemList } from './values.js'

/**
 * Reads and parses a `.properties` file and resolves its `${env:...}` / `${file:...}` references;
 * an unreadable file or an unresolvable reference is a `ConfigError` naming `flag` or the key.
 */
export function readPropertiesFile (path: string, flag: string): Map<string, PropertyEntry> {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : `cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`
    throw new ConfigError([{ key: flag, value: path, message: `${reason}; give the path of a readable Java .properties file` }])
  }
  const problems = new ProblemList()
  const resolved = resolveConfigProviders(parseProperties(text, path), `${path}: `, problems)
  if (!problems.empty) throw new ConfigError(problems.problems)
  return resolved
}
