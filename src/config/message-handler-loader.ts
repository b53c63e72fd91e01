import { spawnSync } from 'node:child_process'
import { basename } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ConfigError, type ConfigProblem } from '../shared/errors.js'
import type { MessageHandlerFunction } from '../shared/message-handler-api.js'
import type { MessageHandlerConfig } from './message-handler-config.js'
import type { MirrorConfig } from './mirror-config.js'

/** A handler module, loaded and checked: the function to call per record, and where it came from. */
export interface LoadedMessageHandler {
  readonly config: MessageHandlerConfig
  readonly handle: MessageHandlerFunction
}

/**
 * The module's handler function: `handle`, else the default export when it is a function, else the
 * default export's `handle` (CommonJS `module.exports = { handle }`).
 */
function pickFunction (namespace: Record<string, unknown>): MessageHandlerFunction | undefined {
  const fallback = namespace.default as { handle?: unknown } | undefined
  const candidate = namespace.handle ?? (typeof fallback === 'function' ? fallback : fallback?.handle)
  return typeof candidate === 'function' ? candidate as MessageHandlerFunction : undefined
}

/** What the module exports, for the message when no function is among them. */
function exportsList (namespace: Record<string, unknown>): string {
  const names = Object.keys(namespace).filter(name => name !== 'default' || namespace.default !== undefined)
  const fallback = namespace.default
  if (fallback !== null && typeof fallback === 'object') names.push(...Object.keys(fallback).map(name => `default.${name}`))
  return names.length === 0 ? 'it exports nothing' : `it exports ${names.join(', ')}`
}

/** Where a syntax error is, from `node --check` (an ES module's SyntaxError does not say). */
function syntaxErrorLocation (path: string): string | undefined {
  const check = spawnSync(process.execPath, ['--check', path], { encoding: 'utf8', timeout: 10_000 })
  const first = check.stderr?.split('\n')[0] ?? ''
  const match = /:(\d+)$/.exec(first)
  return match === null ? undefined : `${basename(path)} line ${match[1]}`
}

function describeLoadError (error: unknown, path: string): string {
  if (!(error instanceof Error)) return String(error)
  const location = error.name === 'SyntaxError' ? syntaxErrorLocation(path) : undefined
  return `${error.name}: ${error.message}${location === undefined ? '' : ` (${location})`}`
}

/** Imports one module (ES module or CommonJS) and finds its handler function; a problem when it cannot. */
export async function loadMessageHandler (config: MessageHandlerConfig): Promise<LoadedMessageHandler | ConfigProblem> {
  let namespace: Record<string, unknown>
  try {
    namespace = await import(pathToFileURL(config.path).href) as Record<string, unknown>
  } catch (error) {
    return { key: config.key, value: config.module, message: `cannot be loaded: ${describeLoadError(error, config.path)}; fix the module` }
  }
  const handle = pickFunction(namespace)
  if (handle === undefined) {
    return {
      key: config.key,
      value: config.module,
      message: `exports no handler function (${exportsList(namespace)}); export function handle (record, context) { ... } or make the function the default export (module.exports = function ...)`,
    }
  }
  return { config, handle }
}

/**
 * Loads the message handler of every flow that has one, before anything connects: each module is
 * imported (its top-level code runs) and must export a function. Every problem is thrown together
 * as one `ConfigError`. Returns the handlers by flow name, for `MirrorSidecarOptions.messageHandlers`.
 */
export async function loadMessageHandlers (config: Pick<MirrorConfig, 'flows'>): Promise<ReadonlyMap<string, LoadedMessageHandler>> {
  const handlers = new Map<string, LoadedMessageHandler>()
  const problems: ConfigProblem[] = []
  const reported = new Set<string>()
  for (const flow of config.flows) {
    if (flow.messageHandler === undefined) continue
    const loaded = await loadMessageHandler(flow.messageHandler)
    if ('handle' in loaded) {
      handlers.set(flow.name, loaded)
    } else if (!reported.has(`${loaded.key}\u0000${flow.messageHandler.path}`)) {
      // Several flows of one command line share the module: one line for it.
      reported.add(`${loaded.key}\u0000${flow.messageHandler.path}`)
      problems.push(loaded)
    }
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return handlers
}
