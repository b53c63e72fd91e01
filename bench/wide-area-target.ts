import { spawn } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { LocalCluster, portAnswers } from '../scripts/local-kafka/clusters.js'
import { stopChild, track, type TrackedChild } from './child-registry.js'

/** Ports of the wide-area target: broker (direct, for the benchmark itself), controller, the listener behind the proxy, the proxy. */
export interface WideAreaPorts {
  readonly broker: number
  readonly controller: number
  readonly behindProxy: number
  readonly proxy: number
}

/** Four consecutive ports from `TEST_EXTRA_PORTS` (default 39000). */
export function wideAreaPorts (env: NodeJS.ProcessEnv = process.env): WideAreaPorts {
  const raw = env.TEST_EXTRA_PORTS
  const base = raw === undefined || raw === '' ? 39_000 : Number(raw)
  if (!Number.isInteger(base) || base < 1024 || base > 65_532) {
    throw new Error(`TEST_EXTRA_PORTS "${raw}": expected a port number between 1024 and 65532 (the wide-area scenario uses it and the next three)`)
  }
  return { broker: base, controller: base + 1, behindProxy: base + 2, proxy: base + 3 }
}

/**
 * Broker settings of the wide-area target: besides its PLAINTEXT listener (the benchmark's admin
 * and read-back, no delay), a `WAN` listener whose advertised address is the proxy's, so a client
 * that bootstraps through the proxy is told to reach the broker through the proxy too.
 */
export function wideAreaBrokerProperties (ports: WideAreaPorts): Record<string, string> {
  return {
    listeners: `PLAINTEXT://127.0.0.1:${ports.broker},CONTROLLER://127.0.0.1:${ports.controller},WAN://127.0.0.1:${ports.behindProxy}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${ports.broker},WAN://127.0.0.1:${ports.proxy}`,
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,WAN:PLAINTEXT',
  }
}

/** A target cluster reached through the latency proxy; `stop()` ends both (safe to call twice). */
export interface WideAreaTarget {
  readonly cluster: LocalCluster
  /** What the mirrors and the ceiling producer are given: the proxy. */
  readonly mirrorBootstrap: string
  readonly delayMs: number
  readonly stop: () => Promise<void>
}

/** Starts a third single-node cluster (`bench-wide-area-target`) and the proxy process in front of its WAN listener. */
export async function startWideAreaTarget (delayMs: number, workDir: string, log: (line: string) => void): Promise<WideAreaTarget> {
  const ports = wideAreaPorts()
  const cluster = new LocalCluster({ name: 'bench-wide-area-target', port: ports.broker, brokerProperties: wideAreaBrokerProperties(ports) })
  // A broker left running by an interrupted run is reused (and holds the listener behind the proxy).
  const portsToCheck = await cluster.pid() === undefined ? [ports.behindProxy, ports.proxy] : [ports.proxy]
  for (const port of portsToCheck) {
    if (await portAnswers(port)) throw new Error(`wide-area scenario: port ${port} on 127.0.0.1 is in use; set TEST_EXTRA_PORTS to a free range of four ports`)
  }
  let proxy: TrackedChild | undefined
  const stop = async (): Promise<void> => {
    if (proxy !== undefined) await stopChild(proxy)
    await cluster.stop()
  }
  try {
    await cluster.start()
    await mkdir(workDir, { recursive: true })
    const out = openSync(join(workDir, 'latency-proxy.log'), 'a')
    try {
      const script = fileURLToPath(new URL('./latency-proxy.js', import.meta.url))
      proxy = track(
        'latency proxy',
        spawn(process.execPath, [script, '--listen', String(ports.proxy), '--upstream', `127.0.0.1:${ports.behindProxy}`, '--delay-ms', String(delayMs)], {
          stdio: ['ignore', out, out],
        })
      )
    } finally {
      closeSync(out)
    }
    const deadline = performance.now() + 10_000
    while (!await portAnswers(ports.proxy)) {
      if (proxy.hasExited() || performance.now() > deadline) {
        throw new Error(`the latency proxy did not listen on 127.0.0.1:${ports.proxy}; see ${join(workDir, 'latency-proxy.log')}`)
      }
      await sleep(50)
    }
    log(`wide-area target: broker 127.0.0.1:${ports.broker} (direct, for the benchmark), mirrors through the proxy 127.0.0.1:${ports.proxy} -> 127.0.0.1:${ports.behindProxy}, ${delayMs} ms each way`)
    return { cluster, mirrorBootstrap: `127.0.0.1:${ports.proxy}`, delayMs, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
