import { WIRE_API_SCHEMAS } from './schemas/wire-api-schemas.js'
import type { ApiVersionsResponseApiVersion } from './schemas/api-versions-response.js'

/** An API the wire layer speaks, by Kafka's name (`Fetch`, `Produce`). */
export type WireApi = keyof typeof WIRE_API_SCHEMAS

/** Kafka's UNSUPPORTED_VERSION error code. */
export const UNSUPPORTED_VERSION = 35

/**
 * The versions of `api` our codecs read and write: those of its request and response schemas, less a
 * newest version Kafka marks unstable (`latestVersionUnstable`: its KIP unfinished, brokers refuse it
 * unless told to accept unstable versions).
 */
export function knownVersions (api: WireApi): readonly [min: number, max: number] {
  const { request, response } = WIRE_API_SCHEMAS[api]
  const min = Math.max(request.validVersions[0], response.validVersions[0])
  const max = Math.min(request.validVersions[1], response.validVersions[1])
  return [min, request.latestVersionUnstable === true ? max - 1 : max]
}

/**
 * Per API the version to speak with one broker (KIP-35): the highest version both the broker (its
 * ApiVersions answer) and our codecs support. An API the broker does not list, or whose ranges do not
 * meet, is absent: a request for it fails before anything is sent.
 */
export function negotiateVersions (brokerApis: readonly ApiVersionsResponseApiVersion[]): Map<WireApi, number> {
  const byKey = new Map(brokerApis.map(api => [api.apiKey, api]))
  const versions = new Map<WireApi, number>()
  for (const api of Object.keys(WIRE_API_SCHEMAS) as WireApi[]) {
    const broker = byKey.get(WIRE_API_SCHEMAS[api].request.apiKey!)
    if (broker === undefined) continue
    const [min, max] = knownVersions(api)
    const version = Math.min(max, broker.maxVersion)
    if (version >= Math.max(min, broker.minVersion)) versions.set(api, version)
  }
  return versions
}
