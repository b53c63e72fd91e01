import type { FlowConfig } from '../../config/mirror-config.js'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import { AtLeastOnceDelivery } from './at-least-once-delivery.js'
import type { DeliveryMode } from './delivery-mode.js'
import type { LaneOptions } from './exactly-once-lane.js'
import { ExactlyOnceDelivery } from './exactly-once-delivery.js'
import type { AckListener, FlowPorts } from '../../ports/ports.js'

/**
 * What the delivery needs from its flow (`LaneOptions` without what the config, the ports and the
 * queue give): `acks` hears each lane's acknowledgements once they are final (the flow's `AckRecorder`).
 */
export type DeliveryContext = Omit<LaneOptions, 'positions' | 'commitIntervalMs' | 'heartbeatIntervalMs' | 'describe' | 'held'> & {
  readonly ackListener: AckListener | undefined
}

/** The one place a flow's delivery guarantee is chosen: exactly-once when `config.exactlyOnce` is set, else at-least-once. */
export function deliveryModeFor (config: FlowConfig, ports: FlowPorts, context: DeliveryContext): DeliveryMode {
  const exactlyOnce = config.exactlyOnce
  if (exactlyOnce === undefined) return new AtLeastOnceDelivery(config, ports.sinks.length, context.acks)
  if (ports.exactlyOnce === undefined || ports.exactlyOnce.sinks.length !== ports.sinks.length) {
    throw new MirrorError(ErrorCodes.INTERNAL, `flow ${config.name}: ${exactlyOnce.key} is on but the ports have no transactional sinks for every lane`)
  }
  const { ackListener, ...lanes } = context
  return new ExactlyOnceDelivery(config, {
    ...lanes,
    sinks: ports.exactlyOnce.sinks,
    positions: ports.exactlyOnce.positions,
    commitIntervalMs: exactlyOnce.commitIntervalMs,
    heartbeatIntervalMs: config.consumer.heartbeatIntervalMs,
    ...(ackListener?.transactionRecords === undefined ? {} : { describe: ackListener.transactionRecords.bind(ackListener) }),
  })
}
