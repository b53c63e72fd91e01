import { editDistance } from '../shared/edit-distance.js'
import { CONNECTION_KEYS } from './client-properties.js'

/** Top-level keys of an mm2.properties file besides the flow and connection keys. */
const TOP_LEVEL_KEYS = ['clusters', 'metrics.partition.labels'] as const

/** Edits a word may be from a key to be taken for it: one, two for long keys, where one slip is a smaller share. */
function allowedEdits (word: string): number {
  return word.length >= 16 ? 2 : 1
}

function nearest (word: string, candidates: Iterable<string>): string | undefined {
  let best: { key: string, distance: number } | undefined
  for (const key of candidates) {
    const distance = editDistance(word.toLowerCase(), key)
    if (distance <= allowedEdits(word) && (best === undefined || distance < best.distance)) best = { key, distance }
  }
  return best?.key
}

/**
 * The key an unread key of an mm2.properties file was meant to be, when it is a slip away from one
 * read in its place: `A->B.<key>` from the flow keys, `A.<key>` from the connection keys of
 * cluster A, a top-level key from both and `clusters`; nothing without `clusters`, which names the
 * aliases, nor for `X.<key>` with an alias X not in it. Client keys under `consumer.`/`producer.`
 * are not guessed at: Kafka's clients have hundreds, most of them rightly unread here. Java's
 * clients and MirrorMaker 2 ignore a key they do not know, so a slip there changes nothing, silently.
 */
export function suggestedMm2Key (key: string, clusters: readonly string[], flowKeys: ReadonlySet<string>): string | undefined {
  const pair = /^([^.]+?->[^.]+?\.)(.+)$/.exec(key)
  if (pair !== null) {
    const found = nearest(pair[2] ?? '', flowKeys)
    return found === undefined ? undefined : `${pair[1] ?? ''}${found}`
  }
  const dot = key.indexOf('.')
  const alias = dot > 0 ? key.slice(0, dot) : ''
  if (clusters.includes(alias)) {
    const rest = key.slice(dot + 1)
    if (/^(consumer|producer|admin)\./.test(rest)) return undefined
    const found = nearest(rest, CONNECTION_KEYS)
    return found === undefined ? undefined : `${alias}.${found}`
  }
  if (/^(consumer|producer|admin)\./.test(key)) return undefined
  const candidates = [...flowKeys, ...CONNECTION_KEYS, ...TOP_LEVEL_KEYS]
  // `X.<key>` with a key read in that place names a cluster alias, not a slip of a top-level key.
  if (dot > 0 && candidates.includes(key.slice(dot + 1))) return undefined
  return nearest(key, candidates)
}
