import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

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
  return Object.fromEntries(
    keyValues.map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue,
    ])
  )
}

/**
 * A minimal OTLP/HTTP JSON trace receiver on 127.0.0.1 (a port the kernel picks): answers 200
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
  // Port 0: the kernel picks a free one. A port probed free can still be taken before the bind, by
  // a listener or by the local end of any outgoing connection (seen: EADDRINUSE in CI).
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(0, '127.0.0.1', resolve) })
  const port = (server.address() as AddressInfo).port
  t.after(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { tracesEndpoint: `http://127.0.0.1:${port}/v1/traces`, spans, resources, requests }
}
