import type { Compression } from './compression.js'

/** The producer settings the MirrorMaker article recommends and production runs: bigger batches, a little linger. */
export const TUNED_PRODUCER_PROPS = Object.freeze({ 'batch.size': '262144', 'linger.ms': '10' })

/** Delay the wide-area scenario's proxy adds each way between the mirrors and the target cluster. */
export const WIDE_AREA_DELAY_MS = 25
/** Delay of the `wide-area-100` scenario: an intercontinental link. */
export const WIDE_AREA_FAR_DELAY_MS = 100

/** The decoding-path scenarios: every record decoded and re-encoded by every mirror, the sidecar included. */
export const DecodingScenarioNames = ['recompress-lz4', 'recompress-zstd', 'gzip-to-zstd', 'handler', 'compacted'] as const

/** The compressible scenarios, one per codec of the source (and of the mirrors' producers). */
export const CompressibleScenarioNames = ['none-compressible', 'gzip-compressible', 'snappy-compressible', 'lz4-compressible', 'zstd-compressible'] as const

export const ScenarioNames = [
  'defaults',
  'tuned',
  'lz4-tuned',
  'zstd-tuned',
  'small-records',
  'compacted',
  'wide-area',
  'wide-area-100',
  'rolling-restart',
  ...CompressibleScenarioNames,
  'recompress-lz4',
  'recompress-zstd',
  'gzip-to-zstd',
  'handler',
] as const
export type ScenarioName = typeof ScenarioNames[number]

/**
 * One of the throughput configurations production users run (issue 12 item 7). Each scenario
 * preloads its own source topic and measures every contender and the ceiling on it in the same run.
 */
export interface Scenario {
  readonly name: ScenarioName
  /** One line for the results' headings. */
  readonly title: string
  /** Compression of every mirror's producer (and the ceiling producer), and of the preload unless `sourceCompression` says otherwise. */
  readonly compression: Compression
  /** Compression of the preload when it differs from the mirrors' producers (the codec-change scenarios). */
  readonly sourceCompression?: Compression
  /**
   * The sidecar runs with an identity message handler (`bench/identity-handler.ts`), which sends
   * every record through its decoding path; MirrorMaker 1 and 2 decode every record anyway.
   */
  readonly messageHandler?: boolean
  /** Producer settings of every mirror and the ceiling producer, over each tool's defaults. */
  readonly producerProps: Readonly<Record<string, string>>
  /** Bytes per value (keys stay 16 bytes). */
  readonly valueBytes: number
  /**
   * Source topic with `cleanup.policy=compact` and every key written `keyRepeats` times; the
   * benchmark waits until the log cleaner has left offset gaps in every partition before mirroring.
   */
  readonly compactedSource: boolean
  /** Milliseconds a loopback proxy adds each way between the mirrors and the target; 0 for none. */
  readonly wideAreaDelayMs: number
  /** Values compress about 100x (zero-padded record numbers): the memory-budget case of a well-compressing source. */
  readonly compressibleValues?: boolean
  /**
   * Source and target are 3-node clusters (replication factor 3, min.insync.replicas 2) instead of
   * the single-node ones, and the target's nodes are restarted one by one in every contender run.
   */
  readonly rollingRestart?: boolean
}

const base = { compression: 'none', producerProps: {}, valueBytes: 512, compactedSource: false, wideAreaDelayMs: 0 } as const

/** `<codec>-compressible`: tuned producers, the source written in that codec, values that compress about 100x (the memory-budget cases). */
function compressibleScenarios (): Record<typeof CompressibleScenarioNames[number], Scenario> {
  const entries = CompressibleScenarioNames.map(name => {
    const compression = name.slice(0, name.indexOf('-')) as Compression
    const title = `${compression === 'none' ? 'no compression' : compression} tuned, values that compress about 100x (zero-padded numbers)`
    return [name, { ...base, name, title, compression, producerProps: TUNED_PRODUCER_PROPS, compressibleValues: true }]
  })
  return Object.fromEntries(entries) as Record<typeof CompressibleScenarioNames[number], Scenario>
}

export const SCENARIOS: Readonly<Record<ScenarioName, Scenario>> = Object.freeze({
  defaults: { ...base, name: 'defaults', title: 'defaults, no compression' },
  tuned: { ...base, name: 'tuned', title: 'tuned: batch.size=262144, linger.ms=10', producerProps: TUNED_PRODUCER_PROPS },
  'lz4-tuned': {
    ...base,
    name: 'lz4-tuned',
    title: 'lz4 tuned: compression lz4, batch.size=262144, linger.ms=10',
    compression: 'lz4',
    producerProps: TUNED_PRODUCER_PROPS,
  },
  'zstd-tuned': {
    ...base,
    name: 'zstd-tuned',
    title: 'zstd tuned: compression zstd, batch.size=262144, linger.ms=10',
    compression: 'zstd',
    producerProps: TUNED_PRODUCER_PROPS,
  },
  'small-records': { ...base, name: 'small-records', title: 'small records: 16 + 100 bytes, defaults', valueBytes: 100 },
  compacted: {
    ...base,
    name: 'compacted',
    title: 'compacted source: cleanup.policy=compact, every key 4 times, offset gaps after compaction',
    compactedSource: true,
  },
  ...compressibleScenarios(),
  'rolling-restart': {
    ...base,
    name: 'rolling-restart',
    title: "rolling restart: tuned producers on 3-node clusters, the target's nodes restarted one by one from a third of the copy",
    producerProps: TUNED_PRODUCER_PROPS,
    rollingRestart: true,
  },
  'wide-area': {
    ...base,
    name: 'wide-area',
    title: `wide area: a loopback proxy adds ${WIDE_AREA_DELAY_MS} ms each way to the target, tuned producers`,
    producerProps: TUNED_PRODUCER_PROPS,
    wideAreaDelayMs: WIDE_AREA_DELAY_MS,
  },
  'wide-area-100': {
    ...base,
    name: 'wide-area-100',
    title: `wide area far: a loopback proxy adds ${WIDE_AREA_FAR_DELAY_MS} ms each way to the target, tuned producers`,
    producerProps: TUNED_PRODUCER_PROPS,
    wideAreaDelayMs: WIDE_AREA_FAR_DELAY_MS,
  },
  'recompress-lz4': {
    ...base,
    name: 'recompress-lz4',
    title: "recompress lz4: uncompressed source, lz4 on every mirror's producer, tuned",
    compression: 'lz4',
    sourceCompression: 'none',
    producerProps: TUNED_PRODUCER_PROPS,
  },
  'recompress-zstd': {
    ...base,
    name: 'recompress-zstd',
    title: "recompress zstd: uncompressed source, zstd on every mirror's producer, tuned",
    compression: 'zstd',
    sourceCompression: 'none',
    producerProps: TUNED_PRODUCER_PROPS,
  },
  'gzip-to-zstd': {
    ...base,
    name: 'gzip-to-zstd',
    title: "gzip to zstd: gzip source, zstd on every mirror's producer, tuned",
    compression: 'zstd',
    sourceCompression: 'gzip',
    producerProps: TUNED_PRODUCER_PROPS,
  },
  handler: {
    ...base,
    name: 'handler',
    title: 'handler: an identity message handler on the sidecar (its decoding path), uncompressed, tuned',
    producerProps: TUNED_PRODUCER_PROPS,
    messageHandler: true,
  },
})

/** How often the compacted scenario writes each key: the log cleaner keeps about 1 in this many records. */
export const COMPACTED_KEY_REPEATS = 4

export class ScenarioListError extends Error {
  override readonly name = 'ScenarioListError'
}

/** Parses `--scenario a,b` (or `all`) into scenarios in the order given, without repeats. */
export function parseScenarioList (raw: string): Scenario[] {
  const names = raw.split(',').map(name => name.trim()).filter(name => name !== '')
  if (names.length === 0) {
    throw new ScenarioListError(
      `--scenario "${raw}": expected a comma list of ${ScenarioNames.join(', ')}, compressible (the five *-compressible), decoding (${DecodingScenarioNames.join(', ')}) or all`
    )
  }
  const chosen: ScenarioName[] = []
  for (const name of names) {
    if (name === 'all' || name === 'compressible' || name === 'decoding') {
      for (const every of name === 'all' ? ScenarioNames : name === 'compressible' ? CompressibleScenarioNames : DecodingScenarioNames) {
        if (!chosen.includes(every)) chosen.push(every)
      }
      continue
    }
    if (!(ScenarioNames as readonly string[]).includes(name)) {
      throw new ScenarioListError(`--scenario "${raw}": unknown scenario "${name}", expected a comma list of ${ScenarioNames.join(', ')}, compressible (the five *-compressible), decoding (${DecodingScenarioNames.join(', ')}) or all`)
    }
    if (!chosen.includes(name as ScenarioName)) chosen.push(name as ScenarioName)
  }
  return chosen.map(name => SCENARIOS[name])
}
