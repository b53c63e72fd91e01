import type { BrokerConnection } from '../../src/kafka/wire/broker-connection.js'
import { waitUntil } from './wait.js'

/**
 * Sends the requests of `batch` on `connection` again and again, each batch pipelined and awaited, until the
 * connection renewed its SASL session `renewals` times (KIP-368) or a request failed; the connection's
 * invariants are checked while each batch is in flight and after it. Some requests are in flight when a renewal
 * starts, some are sent while it runs.
 */
export async function requestsAcrossRenewals (
  connection: BrokerConnection,
  renewals: number,
  batch: () => Array<Promise<unknown>>,
  { timeoutMs = 60_000, intervalMs = 1 } = {}
): Promise<{ answered: number, failures: unknown[] }> {
  let answered = 0
  const failures: unknown[] = []
  await waitUntil(async () => {
    const outcomes = Promise.allSettled(batch())
    connection.checkInvariants()
    for (const outcome of await outcomes) {
      if (outcome.status === 'fulfilled') answered++
      else failures.push(outcome.reason)
    }
    connection.checkInvariants()
    return connection.reauthentications >= renewals || failures.length > 0
  }, { timeoutMs, intervalMs, message: `${renewals} renewals of the SASL session` })
  return { answered, failures }
}
