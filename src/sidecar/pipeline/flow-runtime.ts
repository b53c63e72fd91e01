import { settleWithin } from '../../shared/deadline.js'
import type { Logger } from '../../shared/logger.js'

/**
 * A part of a running flow (or of the process) with a lifecycle. `stop()` must be safe to call
 * before `start()`, during it, and twice: the runner stops every component it holds, whether its
 * start ran, is running, or never began.
 */
export interface Component {
  /** Named in the log lines of the runner: `offset-sync writer`, `pipeline`, ... */
  readonly name: string
  start: () => Promise<void>
  stop: () => Promise<void>
  /**
   * How long `stop()` may take before the runner goes on without it; default the runner's bound
   * (the drain deadline). `Infinity`: not bounded here (a component whose own steps are bounded).
   */
  readonly stopBoundMs?: number
  /** Settles when the component ended by itself or was stopped; rejects when it failed and the process must stop. */
  readonly done?: Promise<void>
}

export interface FlowRuntimeOptions {
  /** Named in the log lines: the flow's name, or `process`. */
  readonly name: string
  readonly logger: Logger
  /** Default bound of each component's `stop()` in ms: the drain deadline (`drain.timeout.ms`). */
  readonly stopBoundMs: number
}

/**
 * Components in start order, started one after the other and stopped in reverse. `start()` stops
 * starting further components once `stop()` was called; a component whose start fails fails
 * `start()` (the caller stops the runtime). `stop()` is once-only: it stops every component in
 * reverse order, each within its bound; a stop that fails or passes its bound is logged and the
 * next one runs. `done` settles when every component's `done` did, rejecting with the first
 * failure; a component that fails (its `done` rejects) calls `onFailure` once.
 */
export class FlowRuntime implements Component {
  readonly name: string
  readonly components: readonly Component[]
  readonly done: Promise<void>
  readonly stopBoundMs = Number.POSITIVE_INFINITY
  readonly #options: FlowRuntimeOptions
  #stopping: Promise<void> | undefined

  constructor (options: FlowRuntimeOptions, components: readonly Component[]) {
    this.name = options.name
    this.#options = options
    this.components = components
    this.done = Promise.all(components.map(async component => await component.done)).then(() => undefined)
    // Observed by whoever awaits `done`; without this an unawaited rejection would end the process.
    this.done.catch(() => { /* seen by whoever awaits done */ })
  }

  /** Calls `onFailure` (once, at the first) when a component's `done` rejects. */
  onFailure (onFailure: (error: unknown, component: Component) => void): void {
    let called = false
    for (const component of this.components) {
      component.done?.catch(error => {
        if (called) return
        called = true
        onFailure(error, component)
      })
    }
  }

  async start (): Promise<void> {
    for (const component of this.components) {
      if (this.#stopping !== undefined) return
      await component.start()
    }
  }

  stop (): Promise<void> {
    this.#stopping ??= this.#stopAll()
    return this.#stopping
  }

  async #stopAll (): Promise<void> {
    for (const component of [...this.components].reverse()) await this.#stopOne(component)
  }

  async #stopOne (component: Component): Promise<void> {
    const { logger, name } = this.#options
    const boundMs = component.stopBoundMs ?? this.#options.stopBoundMs
    const stopping = component.stop().catch(error => {
      logger.warn('stopping a component failed; going on with the next', { runtime: name, component: component.name, error })
    })
    if (boundMs === Number.POSITIVE_INFINITY) return await stopping
    if (await settleWithin(stopping, boundMs)) return
    logger.warn('a component did not stop in time; going on with the next', { runtime: name, component: component.name, boundMs })
  }
}
