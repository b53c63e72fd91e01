import { ConfigError } from '../shared/errors.js'

/** Which client serves one side of an at-least-once flow: the project's own wire layer, or kafkajs. */
export type ClientChoice = 'wire' | 'kafkajs'

/** What environment variable `variable` asks for (unset or empty: undefined); any other value is a `ConfigError` naming it. */
export function clientChoiceSetting (env: NodeJS.ProcessEnv, variable: string): ClientChoice | undefined {
  const value = env[variable]
  if (value === undefined || value === '') return undefined
  if (value === 'wire' || value === 'kafkajs') return value
  throw new ConfigError([{ key: variable, value, message: 'must be wire or kafkajs; unset it for the default (kafkajs)' }])
}
