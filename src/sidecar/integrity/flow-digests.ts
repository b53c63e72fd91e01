import type { DigestConfig, FlowConfig } from '../../config/mirror-config.js'
import { flowLabels } from '../../ports/pipeline-observer.js'
import type { Logger } from '../../shared/logger.js'
import { DigestAudit, type DigestObserver } from './digest-audit.js'
import { DigestPruner } from './digest-pruner.js'
import { DigestWriter } from './digest-writer.js'

export interface FlowDigestsOptions {
  readonly logger: Logger
  readonly observer?: DigestObserver
  /** Whether this process coordinates the flow now: the pruner runs only there. */
  readonly isCoordinator?: () => boolean
}

/**
 * The digests of one flow (`--digests.enabled`): the writer, heard as an ack listener beside the
 * offset syncs, the pruner of digests whose target records are gone, and the continuous audit
 * when `auditIntervalMs` > 0. `start()` before the flow
 * starts (creates the topic); `stop()` after the flow stopped (its last flush wrote the last
 * digests); once-only.
 */
export class FlowDigests {
  readonly writer: DigestWriter
  readonly audit: DigestAudit | undefined
  readonly pruner: DigestPruner
  #stopping: Promise<void> | undefined

  constructor (flow: FlowConfig & { readonly digests: DigestConfig }, options: FlowDigestsOptions) {
    const labels = flowLabels(flow)
    const observer = options.observer ?? {}
    this.audit = flow.digests.auditIntervalMs > 0 ? new DigestAudit(flow, options) : undefined
    this.pruner = new DigestPruner(flow, { logger: options.logger, ...(options.isCoordinator === undefined ? {} : { isCoordinator: options.isCoordinator }) })
    this.writer = new DigestWriter(flow, {
      logger: options.logger,
      onWritten: digests => {
        observer.written?.(labels, digests.length)
        this.audit?.add(digests)
      },
    })
  }

  /** The digests of `flow`, or undefined when they are off. */
  static of (flow: FlowConfig, options: FlowDigestsOptions): FlowDigests | undefined {
    return flow.digests?.enabled !== true ? undefined : new FlowDigests(flow as FlowConfig & { readonly digests: DigestConfig }, options)
  }

  async start (): Promise<void> {
    await this.writer.start()
    await this.pruner.start()
    await this.audit?.start()
  }

  stop (): Promise<void> {
    this.#stopping ??= (async () => {
      await this.audit?.stop()
      await this.pruner.stop()
      await this.writer.stop()
    })()
    return this.#stopping
  }
}
