/**
 * Turns Apache Kafka's message definitions (`common/message/*.json` in the `kafka-clients` jar) into the
 * TypeScript modules of `src/kafka/wire/schemas/`: per message, an interface for its values and a
 * `MessageSchema` constant that `src/kafka/wire/message-codec.ts` reads and writes. The definitions are
 * read the way Kafka's own `MessageGenerator` reads them (versions `n+`, `a-b`, `none`; common structs;
 * per-field flexible versions); the output is deterministic, so a test regenerates it and compares.
 */

/** The APIs the mirror speaks, by Kafka's message name prefix (`Fetch` for FetchRequest and FetchResponse). */
export const WIRE_APIS = [
  'ApiVersions', 'Metadata', 'Fetch', 'ListOffsets', 'OffsetForLeaderEpoch', 'Produce', 'InitProducerId', 'FindCoordinator',
  'JoinGroup', 'SyncGroup', 'Heartbeat', 'LeaveGroup', 'OffsetCommit', 'OffsetFetch', 'ConsumerGroupHeartbeat',
  'AddPartitionsToTxn', 'AddOffsetsToTxn', 'TxnOffsetCommit', 'EndTxn', 'SaslHandshake', 'SaslAuthenticate',
] as const

const HEADERS = ['RequestHeader', 'ResponseHeader'] as const

/** Where the generated modules live, from the repository's root. */
export const SCHEMAS_FOLDER = 'src/kafka/wire/schemas'

const OPEN = 32767
const PRIMITIVES = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'string', 'bytes', 'uuid', 'records'])

interface JsonField {
  name: string
  type: string
  versions: string
  nullableVersions?: string
  taggedVersions?: string
  tag?: number
  default?: string | number | boolean
  flexibleVersions?: string
  ignorable?: boolean
  about?: string
  fields?: JsonField[]
}

interface JsonMessage {
  name: string
  type: string
  apiKey?: number
  validVersions: string
  flexibleVersions?: string
  latestVersionUnstable?: boolean
  fields: JsonField[]
  commonStructs?: Array<{ name: string, versions: string, fields: JsonField[] }>
}

type Range = readonly [number, number] | null

function parseVersions (text: string | undefined): Range {
  if (text === undefined || text === 'none') return null
  const open = /^(\d+)\+$/.exec(text)
  if (open !== null) return [Number(open[1]), OPEN]
  const closed = /^(\d+)-(\d+)$/.exec(text)
  if (closed !== null) return [Number(closed[1]), Number(closed[2])]
  if (/^\d+$/.test(text)) return [Number(text), Number(text)]
  throw new Error(`version range "${text}": expected n+, a-b, n or none`)
}

function intersect (a: Range, b: Range): Range {
  if (a === null || b === null) return null
  const range = [Math.max(a[0], b[0]), Math.min(a[1], b[1])] as const
  return range[0] <= range[1] ? range : null
}

function covers (outer: Range, inner: Range): boolean {
  return inner === null || (outer !== null && outer[0] <= inner[0] && outer[1] >= inner[1])
}

/** Kafka's definitions carry the Apache license as `//` comments before the JSON. */
export function parseDefinition (text: string): JsonMessage {
  return JSON.parse(text.split('\n').filter(line => !line.trim().startsWith('//')).join('\n')) as JsonMessage
}

/** `FetchRequest` is `fetch-request`. */
export function moduleName (messageName: string): string {
  return messageName.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()
}

/** `FetchRequest` is `FETCH_REQUEST`. */
export function constantName (messageName: string): string {
  return moduleName(messageName).replace(/-/g, '_').toUpperCase()
}

function fieldName (name: string): string {
  return name[0]!.toLowerCase() + name.slice(1)
}

function versionsText (range: readonly [number, number]): string {
  return `[${range[0]}, ${range[1]}]`
}

function quote (text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

/** Splits `text` into lines of at most `width` characters at spaces. */
function wrap (text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter(w => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line === '' ? word : `${line} ${word}`
    }
  }
  if (line !== '') lines.push(line)
  return lines
}

function docComment (about: string | undefined, indent: string): string[] {
  if (about === undefined || about.trim() === '') return []
  const text = about.replace(/\*\//g, '* /')
  const single = `${indent}/** ${text.trim()} */`
  if (single.length <= 150) return [single]
  return [`${indent}/**`, ...wrap(text, 140 - indent.length).map(line => `${indent} * ${line}`), `${indent} */`]
}

/** The generated text of one message's module. */
class MessageModule {
  readonly #interfaces: string[] = []
  readonly #emitted = new Set<string>()
  readonly #common: Map<string, { versions: string, fields: JsonField[] }>

  constructor (readonly message: JsonMessage, readonly kafkaVersion: string) {
    this.#common = new Map((message.commonStructs ?? []).map(struct => [struct.name, struct]))
  }

  #structName (name: string): string {
    return name.startsWith(this.message.name) ? name : `${this.message.name}${name}`
  }

  /** The fields of struct type `type` (`[]Name` or `Name`): inline, or a common struct. */
  #structFields (field: JsonField, typeName: string): JsonField[] {
    const fields = field.fields ?? this.#common.get(typeName)?.fields
    if (fields === undefined) throw new Error(`${this.message.name}.${field.name}: struct type ${typeName} has no fields and is no common struct`)
    return fields
  }

  #tsType (field: JsonField, range: Range): string {
    const array = field.type.startsWith('[]')
    const element = array ? field.type.slice(2) : field.type
    let type: string
    if (PRIMITIVES.has(element)) {
      // A request's records may be written from chunks (a rewritten batch header, then the records as fetched); a response's are read as one view.
      const records = this.message.type === 'request' ? 'RecordsChunks' : 'Buffer'
      type = { bool: 'boolean', int64: 'bigint', string: 'string', uuid: 'string', bytes: 'Buffer', records }[element] ?? 'number'
    } else {
      type = this.#structName(element)
      this.#emitInterface(type, this.#structFields(field, element), intersect(range, parseVersions(field.versions)))
    }
    if (array) type = `${type}[]`
    const nullable = field.type === 'records' || intersect(parseVersions(field.nullableVersions), range) !== null
    return nullable ? `${type} | null` : type
  }

  #emitInterface (name: string, fields: readonly JsonField[], range: Range, about?: string): void {
    if (this.#emitted.has(name)) return
    this.#emitted.add(name)
    const lines = [...docComment(about, ''), `export interface ${name} {`]
    for (const field of fields) {
      const versions = intersect(parseVersions(field.versions), range)
      if (versions === null) continue
      const optional = !covers(versions, range) || field.tag !== undefined
      lines.push(...docComment(field.about, '  '), `  ${fieldName(field.name)}${optional ? '?' : ''}: ${this.#tsType(field, range)}`)
    }
    lines.push('}')
    this.#interfaces.push(lines.join('\n'))
  }

  #defaultLiteral (field: JsonField): string | undefined {
    if (field.default === undefined) return undefined
    const text = String(field.default)
    const type = field.type
    if (text === 'null') return 'null'
    if (type === 'int64') return `${BigInt(text)}n`
    if (type === 'bool') return String(text.toLowerCase() === 'true')
    if (type === 'string' || type === 'uuid') return quote(text)
    if (PRIMITIVES.has(type)) return String(Number(text))
    throw new Error(`${this.message.name}.${field.name}: default "${text}" for type ${type}`)
  }

  /** The `type:` value of `field`, its first line after `type: ` and the rest indented from `indent` (the indent of the `type:` line). */
  #fieldType (field: JsonField, indent: string): string {
    const array = field.type.startsWith('[]')
    const element = array ? field.type.slice(2) : field.type
    if (PRIMITIVES.has(element)) return array ? `{ arrayOf: ${quote(element)} }` : quote(element)
    const fields = this.#structFields(field, element)
    if (!array) return `{\n${indent}  fields: ${this.#fields(fields, `${indent}  `)},\n${indent}}`
    return `{\n${indent}  arrayOf: {\n${indent}    fields: ${this.#fields(fields, `${indent}    `)},\n${indent}  },\n${indent}}`
  }

  /** A `fields:` array, its items indented two spaces from `indent` (the indent of the `fields:` line). */
  #fields (fields: readonly JsonField[], indent: string): string {
    if (fields.length === 0) return '[]'
    const inner = `${indent}  `
    const lines = fields.map(field => {
      const versions = parseVersions(field.versions)
      if (versions === null) throw new Error(`${this.message.name}.${field.name}: in no version`)
      const parts = [`name: ${quote(fieldName(field.name))}`, `type: ${this.#fieldType(field, `${inner}  `)}`, `versions: ${versionsText(versions)}`]
      const nullable = parseVersions(field.nullableVersions)
      if (nullable !== null) parts.push(`nullableVersions: ${versionsText(nullable)}`)
      if (field.tag !== undefined) {
        const tagged = parseVersions(field.taggedVersions)
        if (tagged === null) throw new Error(`${this.message.name}.${field.name}: tag ${field.tag} without tagged versions`)
        parts.push(`tag: ${field.tag}`, `taggedVersions: ${versionsText(tagged)}`)
      }
      if (field.flexibleVersions !== undefined) {
        const flexible = parseVersions(field.flexibleVersions)
        parts.push(`flexibleVersions: ${flexible === null ? 'null' : versionsText(flexible)}`)
      }
      const fallback = this.#defaultLiteral(field)
      if (fallback !== undefined) parts.push(`default: ${fallback}`)
      if (field.ignorable === true) parts.push('ignorable: true')
      const single = `${inner}{ ${parts.join(', ')} },`
      if (!single.includes('\n') && single.length <= 160) return single
      return `${inner}{\n${parts.map(part => `${inner}  ${part},`).join('\n')}\n${inner}},`
    })
    return `[\n${lines.join('\n')}\n${indent}]`
  }

  text (): string {
    const message = this.message
    const valid = parseVersions(message.validVersions)
    if (valid === null) throw new Error(`${message.name}: no valid versions`)
    this.#emitInterface(message.name, message.fields, valid, `Kafka's ${message.name}, every version from ${valid[0]} to ${valid[1]}.`)
    const flexible = parseVersions(message.flexibleVersions)
    const head = [
      `  name: ${quote(message.name)},`,
      ...(message.apiKey === undefined ? [] : [`  apiKey: ${message.apiKey},`]),
      `  validVersions: ${versionsText(valid)},`,
      `  flexibleVersions: ${flexible === null ? 'null' : versionsText(flexible)},`,
      ...(message.latestVersionUnstable === true ? ['  latestVersionUnstable: true,'] : []),
      `  fields: ${this.#fields(message.fields, '  ')},`,
    ]
    return [
      `// Generated by scripts/wire-schemas/generate-wire-schemas.ts from ${message.name}.json of Apache Kafka ${this.kafkaVersion}'s kafka-clients; do not edit.`,
      `import type { ${this.#interfaces.some(text => text.includes('RecordsChunks')) ? 'MessageSchema, RecordsChunks' : 'MessageSchema'} } from '../message-schema.js'`,
      '',
      // Interfaces are collected innermost first; the message's own reads best first.
      ...this.#interfaces.slice().reverse().flatMap(text => [text, '']),
      `export const ${constantName(message.name)}: MessageSchema<${message.name}> = {`,
      ...head,
      '}',
      '',
    ].join('\n')
  }
}

/** The index module: every API's key and its two schemas, and the two headers. */
function indexText (kafkaVersion: string): string {
  const imports = [...WIRE_APIS.flatMap(api => [`${api}Request`, `${api}Response`]), ...HEADERS]
    .map(name => `import { ${constantName(name)} } from './${moduleName(name)}.js'`)
  const entries = WIRE_APIS.map(api => `  ${api}: { request: ${constantName(`${api}Request`)}, response: ${constantName(`${api}Response`)} },`)
  return [
    `// Generated by scripts/wire-schemas/generate-wire-schemas.ts from Apache Kafka ${kafkaVersion}'s kafka-clients; do not edit.`,
    ...imports,
    '',
    '/** The APIs the wire layer speaks, each with its request and response schema (the API key is the schemas\' `apiKey`). */',
    'export const WIRE_API_SCHEMAS = {',
    ...entries,
    '} as const',
    '',
    '/** The request header: v1, and v2 for flexible requests (KIP-482). */',
    `export const REQUEST_HEADER_SCHEMA = ${constantName('RequestHeader')}`,
    '/** The response header: v0, and v1 for flexible responses (KIP-482; ApiVersions answers with v0 always, KIP-511). */',
    `export const RESPONSE_HEADER_SCHEMA = ${constantName('ResponseHeader')}`,
    '',
  ].join('\n')
}

/**
 * Every generated module, file name (within `SCHEMAS_FOLDER`) to text, from the definitions by file
 * name (`FetchRequest.json` to its text) of Kafka `kafkaVersion`.
 */
export function generateSchemaModules (definitions: ReadonlyMap<string, string>, kafkaVersion: string): Map<string, string> {
  const modules = new Map<string, string>()
  for (const name of [...WIRE_APIS.flatMap(api => [`${api}Request`, `${api}Response`]), ...HEADERS]) {
    const text = definitions.get(`${name}.json`)
    if (text === undefined) throw new Error(`no ${name}.json among Kafka ${kafkaVersion}'s message definitions`)
    const message = parseDefinition(text)
    modules.set(`${moduleName(name)}.ts`, new MessageModule(message, kafkaVersion).text())
  }
  modules.set('wire-api-schemas.ts', indexText(kafkaVersion))
  return modules
}
