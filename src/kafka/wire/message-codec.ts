import { inVersions, type FieldSchema, type FieldType, type MessageSchema, type RecordsChunks, type StructType } from './message-schema.js'
import { WireFormatError, WireReader } from './wire-reader.js'
import { WireWriter } from './wire-writer.js'

/** A tagged field the schema does not know (a newer broker's), kept as its bytes so that it survives a decode and encode (KIP-482). */
export interface UnknownTaggedField {
  readonly tag: number
  readonly data: Buffer
}

/** Where a decoded struct keeps its unknown tagged fields; set only when there are some. */
export const UNKNOWN_TAGGED_FIELDS = '_unknownTaggedFields'

/** A value the schema cannot carry in the version asked: a null where the version has no null, a field the version lacks. */
export class WireEncodeError extends Error {
  override readonly name = 'WireEncodeError'
}

type Struct = Record<string, unknown>

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA'

/** Writes `value` as version `version` of the message `schema`. */
export function encodeMessage<T> (schema: MessageSchema<T>, version: number, value: T, writer = new WireWriter()): WireWriter {
  if (!inVersions(schema.validVersions, version)) throw new WireEncodeError(noSuchVersion(schema, version))
  writeStruct(writer, schema, schema.name, version, value as Struct, inVersions(schema.flexibleVersions, version))
  return writer
}

/** Reads version `version` of the message `schema` from `reader`, which it leaves after the message. */
export function decodeMessage<T> (schema: MessageSchema<T>, version: number, reader: WireReader): T {
  if (!inVersions(schema.validVersions, version)) throw new WireFormatError(noSuchVersion(schema, version))
  return readStruct(reader, schema, version, inVersions(schema.flexibleVersions, version)) as T
}

function noSuchVersion (schema: MessageSchema<unknown>, version: number): string {
  return `${schema.name} has no version ${version} (valid: ${schema.validVersions.join('-')})`
}

/** A field's value when a message does not carry it: its stated default, else zero, empty or the zero uuid (as Kafka's generated classes). */
function defaultOf (field: FieldSchema, version: number): unknown {
  if (field.default !== undefined) return field.default
  const type = field.type
  if (typeof type === 'string') {
    switch (type) {
      case 'bool': return false
      case 'int64': return 0n
      case 'string': return ''
      case 'bytes': return Buffer.alloc(0)
      case 'records': return null
      case 'uuid': return ZERO_UUID
      default: return 0
    }
  }
  if ('arrayOf' in type) return []
  return defaultStruct(type, version)
}

function defaultStruct (type: StructType, version: number): Struct {
  const struct: Struct = {}
  for (const field of type.fields) {
    if (inVersions(field.versions, version)) struct[field.name] = defaultOf(field, version)
  }
  return struct
}

function isDefault (field: FieldSchema, value: unknown, version: number): boolean {
  const fallback = defaultOf(field, version)
  if (value === null || fallback === null) return value === fallback
  if (Buffer.isBuffer(value)) return Buffer.isBuffer(fallback) && value.equals(fallback)
  if (Array.isArray(value)) return value.length === 0 && Array.isArray(fallback)
  if (typeof value === 'object') {
    const type = field.type as StructType
    return type.fields.every(inner => {
      if (!inVersions(inner.versions, version)) return true
      return isDefault(inner, (value as Struct)[inner.name] ?? defaultOf(inner, version), version)
    })
  }
  return value === fallback
}

function isTagged (field: FieldSchema, version: number): boolean {
  return field.tag !== undefined && inVersions(field.taggedVersions, version)
}

function fieldFlexible (field: FieldSchema, messageFlexible: boolean, version: number): boolean {
  return field.flexibleVersions === undefined ? messageFlexible : inVersions(field.flexibleVersions, version)
}

function writeStruct (writer: WireWriter, type: StructType, path: string, version: number, struct: Struct, flexible: boolean): void {
  const tagged: FieldSchema[] = []
  for (const field of type.fields) {
    const value = struct[field.name]
    if (!inVersions(field.versions, version)) {
      if (value !== undefined && field.ignorable !== true && !isDefault(field, value, version)) {
        throw new WireEncodeError(`${path}.${field.name} is not in version ${version} (versions ${field.versions.join('-')}); leave it unset`)
      }
      continue
    }
    if (isTagged(field, version)) {
      if (value !== undefined && !isDefault(field, value, version)) tagged.push(field)
      continue
    }
    const written = value === undefined ? defaultOf(field, version) : value
    writeField(writer, field, `${path}.${field.name}`, version, written, fieldFlexible(field, flexible, version))
  }
  if (!flexible) {
    if (tagged.length > 0) throw new WireEncodeError(`${path}: tagged fields in version ${version}, which is not flexible`)
    return
  }
  const unknown = (struct[UNKNOWN_TAGGED_FIELDS] as readonly UnknownTaggedField[] | undefined) ?? []
  const entries: Array<{ tag: number, write: (into: WireWriter) => void }> = [
    ...tagged.map(field => ({
      tag: field.tag!,
      write: (into: WireWriter) => writeField(into, field, `${path}.${field.name}`, version, struct[field.name], true),
    })),
    ...unknown.map(field => ({ tag: field.tag, write: (into: WireWriter) => { into.raw(field.data) } })),
  ].sort((a, b) => a.tag - b.tag)
  writer.uvarint(entries.length)
  for (const entry of entries) {
    // KIP-482: each tagged field is its tag, its size, then its bytes, in increasing tag order.
    const body = new WireWriter(64)
    entry.write(body)
    writer.uvarint(entry.tag).uvarint(body.length)
    for (const chunk of body.chunks()) writer.raw(chunk)
  }
}

function writeField (writer: WireWriter, field: FieldSchema, path: string, version: number, value: unknown, flexible: boolean): void {
  if (value === null && !inVersions(field.nullableVersions, version)) {
    throw new WireEncodeError(`${path} is null, which version ${version} does not allow`)
  }
  if (isNullableStruct(field, version)) {
    writer.int8(value === null ? -1 : 1)
    if (value === null) return
  }
  writeValue(writer, field.type, path, version, value, flexible)
}

function writeValue (writer: WireWriter, type: FieldType, path: string, version: number, value: unknown, flexible: boolean): void {
  if (typeof type !== 'string') {
    if ('arrayOf' in type) {
      const items = value as readonly unknown[] | null
      writer.arrayLength(items === null ? null : items.length, flexible)
      if (items === null) return
      for (let i = 0; i < items.length; i++) writeValue(writer, type.arrayOf, `${path}[${i}]`, version, items[i], flexible)
      return
    }
    writeStruct(writer, type, path, version, value as Struct, flexible)
    return
  }
  try {
    switch (type) {
      case 'bool': writer.bool(value as boolean); break
      case 'int8': writer.int8(value as number); break
      case 'int16': writer.int16(value as number); break
      case 'uint16': writer.uint16(value as number); break
      case 'int32': writer.int32(value as number); break
      case 'uint32': writer.uint32(value as number); break
      case 'int64': writer.int64(value as bigint); break
      case 'float64': writer.float64(value as number); break
      case 'uuid': writer.uuid(value as string); break
      case 'string': writer.string(value as string | null, flexible); break
      case 'bytes': writer.bytes(value as Buffer | null, flexible); break
      case 'records': writeRecords(writer, value as RecordsChunks | null, flexible); break
    }
  } catch (error) {
    throw new WireEncodeError(`${path}: ${(error as Error).message}`, { cause: error })
  }
}

function readStruct (reader: WireReader, type: StructType, version: number, flexible: boolean): Struct {
  const struct: Struct = {}
  let taggedByTag: Map<number, FieldSchema> | undefined
  for (const field of type.fields) {
    if (!inVersions(field.versions, version)) continue
    if (isTagged(field, version)) {
      struct[field.name] = defaultOf(field, version)
      ;(taggedByTag ??= new Map()).set(field.tag!, field)
      continue
    }
    struct[field.name] = readField(reader, field, version, fieldFlexible(field, flexible, version))
  }
  if (!flexible) return struct
  const count = reader.uvarint()
  let unknown: UnknownTaggedField[] | undefined
  for (let i = 0; i < count; i++) {
    const tag = reader.uvarint()
    const size = reader.uvarint()
    const field = taggedByTag?.get(tag)
    if (field === undefined) {
      (unknown ??= []).push({ tag, data: reader.raw(size) })
      continue
    }
    const end = reader.position + size
    struct[field.name] = readField(reader, field, version, true)
    if (reader.position !== end) throw new WireFormatError(`tagged field ${field.name} (tag ${tag}) took ${reader.position - end + size} bytes of its ${size}`)
  }
  if (unknown !== undefined) struct[UNKNOWN_TAGGED_FIELDS] = unknown
  return struct
}

/** A struct field (not an array) that may be null: an int8 marker, -1 for null and 1 for present, stands before its fields. */
function isNullableStruct (field: FieldSchema, version: number): boolean {
  return typeof field.type !== 'string' && !('arrayOf' in field.type) && inVersions(field.nullableVersions, version)
}

function readField (reader: WireReader, field: FieldSchema, version: number, flexible: boolean): unknown {
  if (isNullableStruct(field, version) && reader.int8() < 0) return null
  const value = readValue(reader, field.type, version, flexible)
  if (value === null && !inVersions(field.nullableVersions, version)) {
    throw new WireFormatError(`${field.name} is null, which version ${version} does not allow`)
  }
  return value
}

function readValue (reader: WireReader, type: FieldType, version: number, flexible: boolean): unknown {
  if (typeof type !== 'string') {
    if ('arrayOf' in type) {
      const length = reader.arrayLength(flexible)
      if (length === null) return null
      const items = new Array<unknown>(length)
      for (let i = 0; i < length; i++) items[i] = readValue(reader, type.arrayOf, version, flexible)
      return items
    }
    return readStruct(reader, type, version, flexible)
  }
  switch (type) {
    case 'bool': return reader.bool()
    case 'int8': return reader.int8()
    case 'int16': return reader.int16()
    case 'uint16': return reader.uint16()
    case 'int32': return reader.int32()
    case 'uint32': return reader.uint32()
    case 'int64': return reader.int64()
    case 'float64': return reader.float64()
    case 'uuid': return reader.uuid()
    case 'string': return reader.string(flexible)
    case 'bytes':
    case 'records': return reader.bytes(flexible)
  }
}

/** A records field from one buffer or from chunks: one length (their sum), then each chunk as it is. */
function writeRecords (writer: WireWriter, value: RecordsChunks | null, flexible: boolean): void {
  if (value === null || Buffer.isBuffer(value)) {
    writer.bytes(value, flexible)
    return
  }
  let length = 0
  for (const chunk of value) length += chunk.length
  if (flexible) writer.uvarint(length + 1)
  else writer.int32(length)
  for (const chunk of value) writer.raw(chunk)
}
