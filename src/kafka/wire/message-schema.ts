/**
 * The shape of one Kafka message (a request, a response or a header) as Apache Kafka defines it in
 * `common/message/*.json` of the `kafka-clients` jar: its versions, the versions that are flexible
 * (KIP-482: compact lengths and a tagged-field section after every struct) and its fields, each with
 * the versions it exists in. The modules under `schemas/` are generated from those definitions by
 * `scripts/wire-schemas/generate-wire-schemas.ts`; `message-codec.ts` reads and writes any version
 * of a message from its schema.
 */

/** An inclusive version range; `[n, 32767]` (the largest int16) is Kafka's `n+`. */
export type Versions = readonly [min: number, max: number]

/**
 * A request's `records` field: one buffer, or chunks written one after another as one field (a batch
 * header the mirror rewrote, then the records as fetched), so a forwarded batch is never copied to be sent.
 */
export type RecordsChunks = Buffer | readonly Buffer[]

/** Fixed-size and length-prefixed types; `records` is a nullable bytes field holding record batches, never decoded here. */
export type PrimitiveType = 'bool' | 'int8' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'int64' | 'float64' | 'string' | 'bytes' | 'uuid' | 'records'

/** A struct: its fields in wire order (tagged fields are written in the struct's tagged-field section instead). */
export interface StructType {
  readonly fields: readonly FieldSchema[]
}

export interface ArrayType {
  readonly arrayOf: PrimitiveType | StructType
}

export type FieldType = PrimitiveType | StructType | ArrayType

/** A field's default as the definition states it: int64 as bigint, uuid as Kafka's base64url text. */
export type DefaultValue = number | bigint | boolean | string | null

export interface FieldSchema {
  /** Kafka's field name with its first letter in lower case (`ThrottleTimeMs` is `throttleTimeMs`). */
  readonly name: string
  readonly type: FieldType
  /** The versions the field exists in. */
  readonly versions: Versions
  /** The versions in which it may be null; absent: never. */
  readonly nullableVersions?: Versions
  /** KIP-482: a tagged field is written in its struct's tagged-field section, under this tag, only when it differs from its default. */
  readonly tag?: number
  readonly taggedVersions?: Versions
  /**
   * The field's own flexible versions where they differ from the message's: `null` for never. The request
   * header's client id is the one such field: a non-compact string even in header v2, so that a broker can
   * read it before it knows the request's version (KIP-482).
   */
  readonly flexibleVersions?: Versions | null
  readonly default?: DefaultValue
  /** Written as nothing in a version without the field, even when it holds a value other than its default. */
  readonly ignorable?: true
}

/** One message's schema; `T` is the TypeScript shape of its values (generated with it). */
export interface MessageSchema<T = unknown> {
  readonly name: string
  /** The API key of a request or response; absent for headers. */
  readonly apiKey?: number
  readonly validVersions: Versions
  /** `null`: no version is flexible. */
  readonly flexibleVersions: Versions | null
  /** Kafka marks a message's newest version unstable while its KIP is unfinished: never negotiated. */
  readonly latestVersionUnstable?: true
  readonly fields: readonly FieldSchema[]
  /** Never set: carries `T` for the codec's signatures. */
  readonly valueType?: T
}

/** Whether `version` lies in `versions` (`undefined` or `null`: in none). */
export function inVersions (versions: Versions | null | undefined, version: number): boolean {
  return versions !== undefined && versions !== null && version >= versions[0] && version <= versions[1]
}
