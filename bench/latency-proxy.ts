#!/usr/bin/env node
import { createServer, createConnection, type Server, type Socket } from 'node:net'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { DelayLine } from './delay-line.js'

/** What the proxy does: listen on 127.0.0.1:`listenPort`, forward to `upstream`, `delayMs` added each way. */
export interface LatencyProxyOptions {
  readonly listenPort: number
  readonly upstreamHost: string
  readonly upstreamPort: number
  /** Added to every chunk in each direction (client → upstream and back). */
  readonly delayMs: number
  /** A direction stops reading while this many bytes are held or unsent; default 64 MiB. */
  readonly maxQueuedBytes?: number
}

/**
 * Forwards `from` to `to`, each chunk `line.delayMs` after it arrived, in order. Stops reading
 * `from` while too much is held (held bytes plus what `to` has not sent yet), so memory stays
 * bounded whatever the two ends do; ends `to` once `from` ended and everything held was written.
 */
function pipeDelayed (from: Socket, to: Socket, delayMs: number, maxQueuedBytes: number, counted: (bytes: number) => void): void {
  const line = new DelayLine<Buffer>(delayMs)
  let timer: NodeJS.Timeout | undefined
  let ended = false
  const backlog = (): number => line.queuedBytes + to.writableLength
  const release = (): void => {
    timer = undefined
    const due = line.takeDue(performance.now())
    if (to.destroyed) return
    for (const chunk of due) to.write(chunk)
    if (line.size > 0) schedule()
    else if (ended) to.end()
    if (from.isPaused() && backlog() < maxQueuedBytes / 2) from.resume()
  }
  const schedule = (): void => {
    const due = line.nextDueAtMs
    if (timer !== undefined || due === undefined) return
    timer = setTimeout(release, Math.max(0, due - performance.now()))
  }
  from.on('data', (chunk: Buffer) => {
    counted(chunk.length)
    line.push(chunk, chunk.length, performance.now())
    schedule()
    if (backlog() >= maxQueuedBytes) from.pause()
  })
  to.on('drain', () => { if (from.isPaused() && backlog() < maxQueuedBytes / 2) from.resume() })
  from.on('end', () => {
    ended = true
    if (line.size === 0) to.end()
  })
  to.on('close', () => { if (timer !== undefined) clearTimeout(timer) })
}

/** What went through the proxy so far. */
export interface ProxyTraffic {
  connections: number
  bytesToUpstream: number
  bytesToClients: number
}

/** Starts the proxy; resolves once it listens. `close()` stops accepting and cuts every connection. */
export async function startLatencyProxy (
  options: LatencyProxyOptions
): Promise<{ server: Server, traffic: Readonly<ProxyTraffic>, close: () => Promise<void> }> {
  const maxQueuedBytes = options.maxQueuedBytes ?? 64 * 2 ** 20
  const sockets = new Set<Socket>()
  const traffic: ProxyTraffic = { connections: 0, bytesToUpstream: 0, bytesToClients: 0 }
  // Half-open on both sides: an end is forwarded after the delay, not applied at once to the other direction.
  const server = createServer({ allowHalfOpen: true }, client => {
    traffic.connections++
    const upstream = createConnection({ host: options.upstreamHost, port: options.upstreamPort, allowHalfOpen: true })
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      // Kafka clients turn Nagle off; a proxy that batched small writes would add its own delay.
      socket.setNoDelay(true)
      socket.once('close', () => sockets.delete(socket))
    }
    // A reset or error on either side cuts both; a clean end travels through the delay like data.
    const cut = (): void => {
      client.destroy()
      upstream.destroy()
    }
    client.on('error', cut)
    upstream.on('error', cut)
    client.once('close', hadError => {
      if (hadError) cut()
    })
    upstream.once('close', hadError => {
      if (hadError) cut()
    })
    pipeDelayed(client, upstream, options.delayMs, maxQueuedBytes, bytes => {
      traffic.bytesToUpstream += bytes
    })
    pipeDelayed(upstream, client, options.delayMs, maxQueuedBytes, bytes => {
      traffic.bytesToClients += bytes
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.listenPort, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  return {
    server,
    traffic,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}

export class ProxyUsageError extends Error {
  override readonly name = 'ProxyUsageError'
}

export const PROXY_USAGE = 'usage: node dist/bench/latency-proxy.js --listen PORT --upstream HOST:PORT --delay-ms N'

function port (flag: string, raw: string | undefined): number {
  const value = Number(raw)
  if (raw === undefined || !Number.isInteger(value) || value < 1 || value > 65535) {
    throw new ProxyUsageError(`--${flag} "${raw ?? ''}": expected a port number 1-65535\n${PROXY_USAGE}`)
  }
  return value
}

/** Parses the proxy's command line; throws `ProxyUsageError` naming the flag and value. */
export function parseProxyArgs (argv: readonly string[]): LatencyProxyOptions {
  let values
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: { listen: { type: 'string' }, upstream: { type: 'string' }, 'delay-ms': { type: 'string' } },
    }).values
  } catch (error) {
    throw new ProxyUsageError(`${(error as Error).message}\n${PROXY_USAGE}`)
  }
  const upstream = values.upstream ?? ''
  const colon = upstream.lastIndexOf(':')
  if (colon <= 0) throw new ProxyUsageError(`--upstream "${upstream}": expected HOST:PORT, e.g. 127.0.0.1:39002\n${PROXY_USAGE}`)
  const delayMs = Number(values['delay-ms'])
  if (values['delay-ms'] === undefined || !Number.isFinite(delayMs) || delayMs < 0) {
    throw new ProxyUsageError(`--delay-ms "${values['delay-ms'] ?? ''}": expected milliseconds >= 0\n${PROXY_USAGE}`)
  }
  return {
    listenPort: port('listen', values.listen),
    upstreamHost: upstream.slice(0, colon),
    upstreamPort: port('upstream', upstream.slice(colon + 1)),
    delayMs,
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let options: LatencyProxyOptions
  try {
    options = parseProxyArgs(process.argv.slice(2))
  } catch (error) {
    console.error((error as Error).message)
    process.exit(2)
  }
  const proxy = await startLatencyProxy(options).catch((error: unknown) => {
    console.error(`latency proxy: cannot listen on 127.0.0.1:${options.listenPort}: ${(error as Error).message}`)
    process.exit(2)
  })
  console.log(`latency proxy: 127.0.0.1:${options.listenPort} -> ${options.upstreamHost}:${options.upstreamPort}, ${options.delayMs} ms each way`)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      const { connections, bytesToUpstream, bytesToClients } = proxy.traffic
      console.log(`latency proxy: ${connections} connections, ${bytesToUpstream} bytes to 127.0.0.1:${options.upstreamPort}, ${bytesToClients} bytes back`)
      void proxy.close().finally(() => process.exit(0))
    })
  }
}
