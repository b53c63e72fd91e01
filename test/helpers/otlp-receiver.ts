import { createServer, type Server } from 'node:http'
import type { TestContext } from 'node:test'
import { portAnswers } from '../../scripts/local-kafka/clusters.js'

export interface OtlpValue { stringValue?: string, intValue?: string | number, boolValue?: boolean, doubleValue?: number }
export interface OtlpKeyValue { key: string, value: OtlpValue }
export interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: OtlpKeyValue[]
  links?: Array<{ traceId: string, spanId: string }>
  events?: Array<{ name: string, attributes: OtlpKeyValue[] }>
  status?: { code?: number, message?: string }
}
interface OtlpRequest { resourceSpans: Array<{ resource: { attributes: OtlpKeyValue[] }, scopeSpans: Array<{ spans: OtlpSpan[] }> }> }

/** What an `OtlpReceiver` was sent so far; the arrays grow as requests arrive. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>/v1/traces`, for `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`. */
  readonly tracesEndpoint: string
  readonly spans: OtlpSpan[]
  /** Resource attributes, one entry per `resourceSpans` received. */
  readonly resources: OtlpKeyValue[][]
  /** Every HTTP request received, whatever its path or body (`METHOD path`). */
  readonly requests: string[]
}

/** OTLP attributes as a plain object (int values as numbers). */
export function otlpAttributes (keyValues: readonly OtlpKeyValue[] = []): Record<string, string | number | boolean | undefined> {
  return Object.fromEntries(keyValues.map(({ key, value }) => [key, value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue]))
}

/** The first free port on 127.0.0.1 in `[from, to]` (test listeners of this worktree: `TEST_LISTENER_PORTS`, default 39750..39799). */
export async function freeListenerPort (from = Number(process.env.TEST_LISTENER_PORTS ?? 39750), to = from + 49): Promise<number> {
  for (let port = from; port <= to; port++) if (!await portAnswers(port, 200)) return port
  throw new Error(`no free port between ${from} and ${to} on 127.0.0.1`)
}

/**
 * A minimal OTLP/HTTP JSON trace receiver on 127.0.0.1 (port from `freeListenerPort`): answers 200
 * to `POST /v1/traces` and keeps every span; closed when the test ends.
 */
export async function startOtlpReceiver (t: TestContext): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = []
  const resources: OtlpKeyValue[][] = []
  const requests: string[] = []
  const server: Server = createServer((request, response) => {
    let body = ''
    requests.push(`${request.method ?? '?'} ${request.url ?? '?'}`)
    request.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        const parsed = JSON.parse(body) as OtlpRequest
        for (const resourceSpans of parsed.resourceSpans) {
          resources.push(resourceSpans.resource.attributes)
          for (const scopeSpans of resourceSpans.scopeSpans) spans.push(...scopeSpans.spans)
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      } else {
        response.writeHead(404).end()
      }
    })
  })
  const port = await freeListenerPort()
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(port, '127.0.0.1', resolve) })
  t.after(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { tracesEndpoint: `http://127.0.0.1:${port}/v1/traces`, spans, resources, requests }
}
