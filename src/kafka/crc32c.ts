import { kafkajsCrc32c } from './kafkajs-internals.js'

/** CRC-32C (Castagnoli) of `bytes`, unsigned: the checksum of a Kafka record batch. */
export function crc32c (bytes: Buffer): number {
  return kafkajsCrc32c(bytes) >>> 0
}
