/**
 * One header of a Kafka record as written: its name and its value (a null value is legal).
 * A record's headers are a list in wire order; a name may repeat, interleaved with others, and a
 * faithful copy keeps that order.
 */
export interface RecordHeader {
  readonly key: string
  readonly value: Buffer | null
}
