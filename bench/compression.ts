/** The codecs a benchmark preloads with and every mirror writes in. */
export const Compressions = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const
export type Compression = typeof Compressions[number]
