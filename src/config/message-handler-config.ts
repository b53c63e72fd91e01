import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { PassThroughMode } from './pass-through.js'
import type { ProblemList } from './values.js'

/** A flow's message handler (`--message.handler`, mm2.properties `message.handler`): a JavaScript module. */
export interface MessageHandlerConfig {
  /** The path as given, for messages. */
  readonly module: string
  /** Absolute path of the module file (relative paths are resolved against the working directory). */
  readonly path: string
  /** `--message.handler.args`: handed to every call as `context.args`; undefined when not given. */
  readonly args: string | undefined
  /** The key that named the module (`--message.handler`, `A->B.message.handler`), for messages. */
  readonly key: string
}

/** True when the flow maps records through a message handler (so every record must be decoded: the deep path). */
export function hasMessageHandler (flow: { readonly messageHandler?: MessageHandlerConfig }): boolean {
  return flow.messageHandler !== undefined
}

const MODULE_HINT = 'give the path of a JavaScript module (.js, .mjs or .cjs) that exports handle(record), see docs/message-handler.md'

/**
 * Records a problem unless the same one is listed: several flows of one mm2.properties file read
 * the same top-level `message.handler`, and one line says it.
 */
function addOnce (problems: ProblemList, key: string, value: string, message: string): void {
  if (!problems.problems.some(p => p.key === key && p.value === value && p.message === message)) problems.add(key, value, message)
}

/**
 * Checks `--message.handler` and `--message.handler.args` as far as can be done without running
 * anything: the module file exists and is a file. Loading it (which runs its code) is
 * `loadMessageHandlers`, still before anything connects.
 */
export function parseMessageHandler (
  keys: { readonly module: string, readonly args: string },
  module: string | undefined, args: string | undefined, problems: ProblemList, cwd = process.cwd()
): MessageHandlerConfig | undefined {
  if (module === undefined) {
    if (args !== undefined) addOnce(problems, keys.args, args, `has no effect without ${keys.module}; give the handler module too, or remove it`)
    return undefined
  }
  if (module.trim() === '') {
    addOnce(problems, keys.module, module, `is empty; ${MODULE_HINT}`)
    return undefined
  }
  const path = resolve(cwd, module)
  let isFile: boolean
  try {
    isFile = statSync(path).isFile()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // MirrorMaker 1 named a Java class here: say why that cannot work rather than "file not found".
    if (code === 'ENOENT' && /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+$/.test(module) && !/\.[cm]?js$/.test(module)) {
      addOnce(
        problems,
        keys.module,
        module,
        `looks like a Java class (MirrorMaker 1's handlers): Java cannot run here; write the handler as a JavaScript module and ${MODULE_HINT}`
      )
    } else {
      addOnce(problems, keys.module, module, `${code === 'ENOENT' ? 'file not found' : `cannot read it (${code ?? 'error'})`}; ${MODULE_HINT}`)
    }
    return undefined
  }
  if (!isFile) {
    addOnce(problems, keys.module, module, `is not a file; ${MODULE_HINT}`)
    return undefined
  }
  return { module, path, args, key: keys.module }
}

/**
 * A handler reads every record, so its flow never forwards batches undecoded: `auto` quietly takes
 * the deep path, but `on` (asked for explicitly) contradicts the handler and is a problem.
 */
export function checkHandlerPassThrough (
  passThrough: PassThroughMode,
  passThroughKey: string,
  handler: MessageHandlerConfig | undefined,
  problems: ProblemList
): void {
  if (passThrough !== 'on' || handler === undefined) return
  addOnce(
    problems,
    passThroughKey,
    passThroughKey.endsWith('shallowiterator.enable') ? 'true' : 'on',
    `contradicts ${handler.key} "${handler.module}": a message handler reads every record, so no batch can be forwarded undecoded; use auto (the default) or off, or drop the handler`
  )
}
