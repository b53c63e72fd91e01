import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { ConfigError } from '../shared/errors.js'
import type { PropertyEntry } from './java-properties.js'
import { freezeConfig, type MirrorConfig, type Mm2PositionsConfig } from './mirror-config.js'
import { configFromMm2Properties, MM2_SOURCE_CONNECTOR, type Mm2Options } from './mm2-config.js'
import { OAUTH_LOGIN_MODULE } from './oauth-bearer-config.js'
import { StrimziSecrets } from './strimzi-secrets.js'
import { ProblemList } from './values.js'

type Yaml = typeof import('yaml')
let yaml: Yaml | undefined
/** The yaml package, loaded when a Strimzi resource is read: most runs read none, and loading it costs every start some 30 ms of CPU. */
function parseAllDocuments (text: string): ReturnType<Yaml['parseAllDocuments']> {
  yaml ??= createRequire(import.meta.url)('yaml') as Yaml
  return yaml.parseAllDocuments(text)
}

/** The `apiVersion`s of Strimzi's KafkaMirrorMaker2 custom resource this reads. */
const STRIMZI_API_VERSIONS = ['kafka.strimzi.io/v1beta2', 'kafka.strimzi.io/v1'] as const

export interface StrimziOptions extends Mm2Options {
  /** `--strimzi.secrets.dir`: a folder of `<secretName>/<key>` files; default Strimzi's mount paths (`StrimziSecrets`). */
  readonly secretsDir?: string
}

type Node = Record<string, unknown>

/** `spec` fields about the Kubernetes deployment or the Connect worker, not about what is mirrored: reported as ignored. */
const DEPLOYMENT_FIELDS = new Set(['version', 'replicas', 'image', 'resources', 'livenessProbe', 'readinessProbe', 'jvmOptions', 'jmxOptions', 'logging',
  'clientRackInitImage', 'rack', 'metricsConfig', 'tracing', 'template', 'externalConfiguration', 'plugins', 'build'])
/**
 * Fields of the target cluster that configure Kafka Connect's own topics and group: ignored
 * (`offsetStorageTopic` names where MirrorMaker 2's positions are: read).
 */
const CONNECT_FIELDS = new Set(['groupId', 'configStorageTopic', 'statusStorageTopic'])
/** Connect's offsets topic of a Strimzi KafkaMirrorMaker2 unless the resource names one (Strimzi's default). */
const STRIMZI_OFFSETS_TOPIC_DEFAULT = 'mirrormaker2-cluster-offsets'
/** Connector fields that manage Connect's own state and do not change what is copied: ignored. */
const CONNECTOR_IGNORED = new Set(['version', 'autoRestart', 'listOffsets', 'alterOffsets'])
/** OAuth fields the sidecar's OIDC client-credentials login has no counterpart for that are harmless to leave out. */
const OAUTH_IGNORED = new Set([
  'connectTimeoutSeconds',
  'readTimeoutSeconds',
  'httpRetries',
  'httpRetryPauseMs',
  'enableMetrics',
  'includeAcceptHeader',
  'accessTokenIsJwt',
  'maxTokenExpirySeconds',
])

/**
 * Cluster `config` keys Strimzi drops with a warning (`KafkaMirrorMaker2ClusterSpec.FORBIDDEN_PREFIXES`
 * and its exceptions): connection and security come from the resource's own fields. Reported as ignored.
 */
const FORBIDDEN_CONFIG_PREFIXES = [
  'group.id',
  'config.storage.topic',
  'offset.storage.topic',
  'status.storage.topic',
  'ssl.',
  'sasl.',
  'security.',
  'listeners',
  'plugin.path',
  'rest.',
  'bootstrap.servers',
  'consumer.interceptor.classes',
  'producer.interceptor.classes',
]
const FORBIDDEN_CONFIG_EXCEPTIONS = ['ssl.endpoint.identification.algorithm', 'ssl.cipher.suites', 'ssl.protocol', 'ssl.enabled.protocols']

function isForbiddenClusterConfig (key: string): boolean {
  return !FORBIDDEN_CONFIG_EXCEPTIONS.includes(key) && FORBIDDEN_CONFIG_PREFIXES.some(prefix => key.startsWith(prefix))
}

const SASL_MODULES: Record<string, [mechanism: string, module: string]> = {
  'scram-sha-512': ['SCRAM-SHA-512', 'org.apache.kafka.common.security.scram.ScramLoginModule'],
  'scram-sha-256': ['SCRAM-SHA-256', 'org.apache.kafka.common.security.scram.ScramLoginModule'],
  plain: ['PLAIN', 'org.apache.kafka.common.security.plain.PlainLoginModule'],
}

function isNode (value: unknown): value is Node {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** A JAAS option value in double quotes, with `\` and `"` escaped. */
function jaasQuoted (value: string): string {
  return `"${value.replace(/[\\"]/g, c => `\\${c}`)}"`
}

/**
 * Turns a Strimzi `KafkaMirrorMaker2` resource into the mm2.properties keys MirrorMaker 2 would
 * run with, remembering for each key the resource field it came from.
 */
class Translation {
  readonly properties = new Map<string, PropertyEntry>()
  /** mm2.properties key -> resource field, to name fields in messages. */
  readonly fieldOf = new Map<string, string>()
  /** Connect's offsets topic a cluster names (`offsetStorageTopic`, v1; `config.offset.storage.topic`, v1beta2), by alias, with its field. */
  readonly offsetsTopicOf = new Map<string, { readonly topic: string, readonly field: string }>()
  readonly #path: string
  readonly #problems: ProblemList
  readonly #secrets: StrimziSecrets

  constructor (path: string, problems: ProblemList, secrets: StrimziSecrets) {
    this.#path = path
    this.#problems = problems
    this.#secrets = secrets
  }

  set (key: string, value: unknown, field: string): void {
    this.properties.set(key, { value: typeof value === 'string' ? value : JSON.stringify(value), file: this.#path, line: 0 })
    this.fieldOf.set(key, field)
  }

  string (node: Node, name: string, field: string, required = false): string | undefined {
    const value = node[name]
    if (value === undefined || value === null) {
      if (required) this.#problems.add(`${field}.${name}`, undefined, 'missing; the resource must set it')
      return undefined
    }
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value)
    this.#problems.add(`${field}.${name}`, JSON.stringify(value), 'expected a string')
    return undefined
  }

  /** A cluster (`spec.target`, `spec.mirrors[].source`, `spec.clusters[]`): connection, TLS, authentication and client config as `<alias>.*` keys. */
  cluster (node: Node, field: string): string | undefined {
    const alias = this.string(node, 'alias', field, true)
    const bootstrap = this.string(node, 'bootstrapServers', field, true)
    if (alias === undefined) return undefined
    if (bootstrap !== undefined) this.set(`${alias}.bootstrap.servers`, bootstrap, `${field}.bootstrapServers`)
    for (const name of Object.keys(node)) {
      if (CONNECT_FIELDS.has(name)) this.#problems.ignore(`${field}.${name}`)
      else if (name === 'offsetStorageTopic') {
        const topic = this.string(node, name, field)
        if (topic !== undefined) this.offsetsTopicOf.set(alias, { topic, field: `${field}.${name}` })
      } else if (!['alias', 'bootstrapServers', 'tls', 'authentication', 'config'].includes(name)) {
        this.#problems.add(`${field}.${name}`, undefined, 'is not a field of a KafkaMirrorMaker2 cluster; remove it or fix its name')
      }
    }
    const config = node.config
    if (isNode(config)) {
      for (const [key, value] of Object.entries(config)) {
        if (key === 'offset.storage.topic' && typeof value === 'string' && !this.offsetsTopicOf.has(alias)) {
          this.offsetsTopicOf.set(alias, { topic: value, field: `${field}.config.${key}` })
        } else if (isForbiddenClusterConfig(key)) this.#problems.ignore(`${field}.config.${key}`)
        else this.set(`${alias}.${key}`, value, `${field}.config.${key}`)
      }
    }
    const tls = node.tls
    const usesTls = isNode(tls)
    if (usesTls) this.#trustedCertificates(alias, tls, `${field}.tls`)
    const authentication = node.authentication
    let sasl = false
    if (isNode(authentication)) sasl = this.#authentication(alias, authentication, `${field}.authentication`, usesTls)
    this.set(`${alias}.security.protocol`, `${sasl ? 'SASL_' : ''}${usesTls ? 'SSL' : 'PLAINTEXT'}`, usesTls ? `${field}.tls` : `${field}.authentication`)
    return alias
  }

  #trustedCertificates (alias: string, tls: Node, field: string): void {
    const certificates = tls.trustedCertificates
    if (certificates === undefined) return
    if (!Array.isArray(certificates)) {
      this.#problems.add(`${field}.trustedCertificates`, undefined, 'expected a list of { secretName, certificate | pattern }')
      return
    }
    const pems: string[] = []
    certificates.forEach((source: unknown, i) => {
      const at = `${field}.trustedCertificates[${i}]`
      if (!isNode(source)) { this.#problems.add(at, undefined, 'expected { secretName, certificate | pattern }'); return }
      const secretName = this.string(source, 'secretName', at, true)
      const certificate = this.string(source, 'certificate', at)
      const pattern = this.string(source, 'pattern', at)
      if (secretName === undefined) return
      if ((certificate === undefined) === (pattern === undefined)) {
        this.#problems.add(at, secretName, 'give exactly one of certificate (a key of the Secret) or pattern (e.g. *.crt)')
        return
      }
      const texts =
        certificate !== undefined
          ? [this.#secrets.read(`${at}.certificate`, 'certs', alias, secretName, certificate)]
          : this.#secrets.readMatching(`${at}.pattern`, 'certs', alias, secretName, pattern as string)
      for (const text of texts ?? []) if (text !== undefined) pems.push(text.trim())
    })
    if (pems.length > 0) {
      this.set(`${alias}.ssl.truststore.type`, 'PEM', `${field}.trustedCertificates`)
      this.set(`${alias}.ssl.truststore.certificates`, pems.join('\n'), `${field}.trustedCertificates`)
    }
  }

  /** Refuses the fields of `authentication` other than `known` (those in `ignored` are reported as ignored). */
  #refuseOthers (auth: Node, field: string, type: string | undefined, known: readonly string[], ignored: ReadonlySet<string>): void {
    for (const name of Object.keys(auth)) {
      if (ignored.has(name)) this.#problems.ignore(`${field}.${name}`)
      else if (!known.includes(name)) {
        this.#problems.add(`${field}.${name}`, JSON.stringify(auth[name]), `cannot be honoured with authentication type ${type ?? '?'}; remove it`)
      }
    }
  }

  /** Sets the `<alias>.ssl.keystore.*` or `<alias>.sasl.*` keys of `authentication`; true when it is SASL. */
  #authentication (alias: string, auth: Node, field: string, usesTls: boolean): boolean {
    const type = this.string(auth, 'type', field, true)
    const refuseOthers = (known: readonly string[], ignored: ReadonlySet<string> = new Set()): void => this.#refuseOthers(auth, field, type, known, ignored)
    if (type === 'tls') {
      refuseOthers(['type', 'certificateAndKey'])
      if (!usesTls) {
        this.#problems.add(`${field}.type`, type, `TLS client authentication needs a TLS connection; add ${field.replace(/authentication$/, 'tls')}: {}`)
      }
      const source = auth.certificateAndKey
      if (!isNode(source)) { this.#problems.add(`${field}.certificateAndKey`, undefined, 'missing; give { secretName, certificate, key }'); return false }
      const at = `${field}.certificateAndKey`
      const secretName = this.string(source, 'secretName', at, true)
      const certificate = this.string(source, 'certificate', at, true)
      const key = this.string(source, 'key', at, true)
      if (secretName === undefined || certificate === undefined || key === undefined) return false
      const chain = this.#secrets.read(`${at}.certificate`, 'certs', alias, secretName, certificate)
      const privateKey = this.#secrets.read(`${at}.key`, 'certs', alias, secretName, key)
      if (chain === undefined || privateKey === undefined) return false
      this.set(`${alias}.ssl.keystore.type`, 'PEM', at)
      this.set(`${alias}.ssl.keystore.certificate.chain`, chain.trim(), `${at}.certificate`)
      this.set(`${alias}.ssl.keystore.key`, privateKey.trim(), `${at}.key`)
      return false
    }
    const sasl = type === undefined ? undefined : SASL_MODULES[type]
    if (sasl !== undefined) {
      refuseOthers(['type', 'username', 'passwordSecret'])
      const username = this.string(auth, 'username', field, true)
      const secret = auth.passwordSecret
      if (!isNode(secret)) { this.#problems.add(`${field}.passwordSecret`, undefined, 'missing; give { secretName, password }'); return true }
      const at = `${field}.passwordSecret`
      const secretName = this.string(secret, 'secretName', at, true)
      const passwordKey = this.string(secret, 'password', at, true)
      const password = secretName === undefined || passwordKey === undefined ? undefined : this.#secrets.read(at, 'password', alias, secretName, passwordKey)
      this.set(`${alias}.sasl.mechanism`, sasl[0], `${field}.type`)
      if (username !== undefined && password !== undefined) {
        // A secret volume file often ends in a newline the password does not have (Strimzi reads the Secret's value as is).
        this.set(
          `${alias}.sasl.jaas.config`,
          `${sasl[1]} required username=${jaasQuoted(username)} password=${jaasQuoted(password.replace(/\r?\n$/, ''))};`,
          at
        )
      }
      return true
    }
    if (type === 'oauth') {
      refuseOthers(['type', 'clientId', 'clientSecret', 'tokenEndpointUri', 'scope'], OAUTH_IGNORED)
      const clientId = this.string(auth, 'clientId', field, true)
      const endpoint = this.string(auth, 'tokenEndpointUri', field, true)
      const scope = this.string(auth, 'scope', field)
      const secret = auth.clientSecret
      let clientSecret: string | undefined
      if (!isNode(secret)) {
        this.#problems.add(`${field}.clientSecret`, undefined, 'missing; the sidecar logs in with the client credentials grant: give { secretName, key }')
      } else {
        const secretName = this.string(secret, 'secretName', `${field}.clientSecret`, true)
        const key = this.string(secret, 'key', `${field}.clientSecret`, true)
        if (secretName !== undefined && key !== undefined) {
          clientSecret = this.#secrets.read(`${field}.clientSecret`, 'oauth', alias, secretName, key)?.replace(/\r?\n$/, '')
        }
      }
      this.set(`${alias}.sasl.mechanism`, 'OAUTHBEARER', `${field}.type`)
      if (endpoint !== undefined) this.set(`${alias}.sasl.oauthbearer.token.endpoint.url`, endpoint, `${field}.tokenEndpointUri`)
      if (clientId !== undefined && clientSecret !== undefined) {
        this.set(
          `${alias}.sasl.jaas.config`,
          `${OAUTH_LOGIN_MODULE} required clientId=${jaasQuoted(clientId)} clientSecret=${jaasQuoted(clientSecret)}${scope === undefined ? '' : ` scope=${jaasQuoted(scope)}`};`,
          `${field}.clientSecret`
        )
      }
      return true
    }
    if (type !== undefined) {
      this.#problems.add(`${field}.type`, type, 'cannot be honoured here; use tls, scram-sha-512, scram-sha-256, plain or oauth (client credentials)')
    }
    return false
  }

  /** One entry of `spec.mirrors`: the flow `source->target` with its patterns and connector configs. */
  mirror (node: Node, field: string, source: string, target: string): void {
    const flow = `${source}->${target}`
    this.set(`${flow}.enabled`, 'true', field)
    const patterns: Array<[string, string]> = [
      ['topicsPattern', 'topics'],
      ['topicsExcludePattern', 'topics.exclude'],
      ['topicsBlacklistPattern', 'topics.exclude'],
      ['groupsPattern', 'groups'],
      ['groupsExcludePattern', 'groups.exclude'],
      ['groupsBlacklistPattern', 'groups.exclude'],
    ]
    for (const [name, key] of patterns) {
      const value = this.string(node, name, field)
      if (value === undefined) continue
      if (this.properties.has(`${flow}.${key}`)) {
        this.#problems.add(`${field}.${name}`, value, `repeats ${this.fieldOf.get(`${flow}.${key}`) ?? key}; keep one of them`)
        continue
      }
      this.set(`${flow}.${key}`, value, `${field}.${name}`)
    }
    for (const connector of ['sourceConnector', 'checkpointConnector'] as const) {
      const spec = node[connector]
      if (spec === undefined || spec === null) continue
      const at = `${field}.${connector}`
      if (!isNode(spec)) { this.#problems.add(at, undefined, 'expected an object with config and tasksMax'); continue }
      for (const name of Object.keys(spec)) {
        if (CONNECTOR_IGNORED.has(name)) this.#problems.ignore(`${at}.${name}`)
        else if (name === 'pause' && spec.pause === true) {
          this.#problems.add(
            `${at}.pause`,
            'true',
            'a paused connector cannot be honoured: the sidecar mirrors every flow it is given; remove the mirror or set pause: false'
          )
        } else if (name === 'state' && spec.state !== 'running') {
          this.#problems.add(
            `${at}.state`,
            String(spec.state),
            'only running can be honoured: the sidecar mirrors every flow it is given; remove the mirror or set state: running'
          )
        } else if (!['config', 'tasksMax', 'pause', 'state'].includes(name)) {
          this.#problems.add(`${at}.${name}`, undefined, 'is not a field of a KafkaMirrorMaker2 connector; remove it or fix its name')
        }
      }
      if (connector === 'sourceConnector' && spec.tasksMax !== undefined) this.set(`${flow}.tasks.max`, spec.tasksMax, `${at}.tasksMax`)
      const config = spec.config
      if (!isNode(config)) continue
      for (const [key, value] of Object.entries(config)) {
        const full = `${flow}.${key}`
        const earlier = this.properties.get(full)
        if (earlier !== undefined && earlier.value !== (typeof value === 'string' ? value : JSON.stringify(value))) {
          this.#problems.add(
            `${at}.config.${key}`,
            String(value),
            `differs from ${this.fieldOf.get(full) ?? key} (${earlier.value}); the sidecar runs one flow with one value: give both the same`
          )
          continue
        }
        this.set(full, value, `${at}.config.${key}`)
      }
    }
    if (node.heartbeatConnector !== undefined) this.#problems.ignore(`${field}.heartbeatConnector`)
  }
}

/** The KafkaMirrorMaker2 document of `path` (a YAML file that may hold several documents). */
function readResource (path: string, problems: ProblemList): Node | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    problems.add(
      '--strimzi',
      path,
      `${code === 'ENOENT' ? 'file not found' : `cannot read it (${code ?? 'error'})`}; give the path of a KafkaMirrorMaker2 YAML file`
    )
    return undefined
  }
  const documents = parseAllDocuments(text)
  const list = Array.isArray(documents) ? documents : [documents]
  for (const document of list) {
    if (document.errors.length > 0) {
      problems.add('--strimzi', path, `not valid YAML (${document.errors[0]?.message.split('\n')[0] ?? 'error'}); fix the file`)
      return undefined
    }
  }
  const resources = list.map(d => d.toJS() as unknown).filter((r): r is Node => isNode(r) && r.kind === 'KafkaMirrorMaker2')
  if (resources.length !== 1) {
    problems.add(
      '--strimzi',
      path,
      `holds ${resources.length} KafkaMirrorMaker2 resources; give a file with exactly one (kubectl get kafkamirrormaker2 NAME -o yaml)`
    )
    return undefined
  }
  return resources[0]
}

/**
 * Builds the sidecar configuration from a Strimzi `KafkaMirrorMaker2` resource (apiVersion
 * `kafka.strimzi.io/v1` or `v1beta2`): the same flows an mm2.properties file with the equivalent
 * keys gives (`configFromMm2Properties`), with every problem naming the resource field it is about.
 * Secrets are read from files (`StrimziSecrets`); fields about the Kubernetes deployment or Kafka
 * Connect's internals are reported as ignored; what cannot be honoured is refused.
 */
export function configFromStrimzi (path: string, options: StrimziOptions, problems = new ProblemList()): MirrorConfig {
  const resource = readResource(path, problems)
  const secrets = new StrimziSecrets(options.secretsDir, problems)
  const translation = new Translation(path, problems, secrets)
  const apiVersion = typeof resource?.apiVersion === 'string' ? resource.apiVersion : undefined
  if (resource !== undefined && !(STRIMZI_API_VERSIONS as readonly string[]).includes(apiVersion ?? '')) {
    problems.add('apiVersion', apiVersion, `expected ${STRIMZI_API_VERSIONS.join(' or ')}`)
  }
  const spec = resource?.spec
  if (resource !== undefined && !isNode(spec)) problems.add('spec', undefined, 'missing; the resource must have a spec')
  if (isNode(spec)) translateSpec(spec, apiVersion === 'kafka.strimzi.io/v1', translation, problems)
  const targets = new Set([...translation.properties.keys()].flatMap(key => /^[^.]+->([^.]+)\.enabled$/.exec(key)?.[1] ?? []))
  for (const wanted of options.clusters ?? []) {
    if (!targets.has(wanted)) {
      problems.add('--clusters', wanted, `is not the target cluster of ${path} (${[...targets].join(', ')}); give that alias or drop --clusters`)
    }
  }
  if (!problems.empty) throw new ConfigError(problems.problems)
  const clusters = [
    ...new Set([...translation.properties.keys()].filter(k => k.endsWith('.bootstrap.servers')).map(k => k.slice(0, -'.bootstrap.servers'.length))),
  ]
  translation.set('clusters', clusters.join(', '), 'spec')
  const fieldOf = (key: string): string => translation.fieldOf.get(key) ?? key
  try {
    // Strimzi runs MirrorMaker 2's connectors in a Connect cluster, named `<source>-><target>.<connector class>`.
    const mm2Positions = (source: string, target: string): Mm2PositionsConfig => {
      const named = translation.offsetsTopicOf.get(target)
      return {
        offsetsTopic: named?.topic ?? STRIMZI_OFFSETS_TOPIC_DEFAULT,
        key: named?.field ?? 'spec.target.offsetStorageTopic',
        connector: `${source}->${target}.${MM2_SOURCE_CONNECTOR}`,
      }
    }
    const config = configFromMm2Properties(translation.properties, path, { ...options, mm2Positions }, problems)
    return freezeConfig({ ...config, ignoredKeys: [...new Set((config.ignoredKeys ?? []).map(fieldOf))].sort() })
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError(error.problems.map(p => ({ ...p, key: fieldOf(p.key) })))
    throw error
  }
}

/** The fields of a KafkaMirrorMaker2 mirror (`spec.mirrors[]`), v1 and v1beta2. */
const MIRROR_FIELDS = [
  'source', 'sourceCluster', 'targetCluster', 'sourceConnector', 'checkpointConnector', 'heartbeatConnector', 'topicsPattern', 'topicsExcludePattern',
  'topicsBlacklistPattern', 'groupsPattern', 'groupsExcludePattern', 'groupsBlacklistPattern',
]

function translateSpec (spec: Node, v1: boolean, translation: Translation, problems: ProblemList): void {
  for (const name of Object.keys(spec)) {
    if (DEPLOYMENT_FIELDS.has(name)) problems.ignore(`spec.${name}`)
    else if (!['target', 'mirrors', 'clusters', 'connectCluster'].includes(name)) {
      problems.add(`spec.${name}`, undefined, 'is not a field of a KafkaMirrorMaker2 spec; remove it or fix its name')
    }
  }
  if (v1) {
    for (const name of ['clusters', 'connectCluster']) {
      if (spec[name] !== undefined) {
        problems.add(
          `spec.${name}`,
          undefined,
          'is not in kafka.strimzi.io/v1; use spec.target and spec.mirrors[].source (or apiVersion kafka.strimzi.io/v1beta2)'
        )
      }
    }
  }
  // v1beta2's older form: clusters by alias, the target named by connectCluster.
  const byAlias = new Map<string, string>()
  if (Array.isArray(spec.clusters)) {
    spec.clusters.forEach((cluster: unknown, i) => {
      const alias = isNode(cluster) ? translation.cluster(cluster, `spec.clusters[${i}]`) : undefined
      if (!isNode(cluster)) problems.add(`spec.clusters[${i}]`, undefined, 'expected { alias, bootstrapServers, ... }')
      if (alias !== undefined) byAlias.set(alias, `spec.clusters[${i}]`)
    })
  }
  let target: string | undefined
  if (isNode(spec.target)) target = translation.cluster(spec.target, 'spec.target')
  else if (spec.target !== undefined) problems.add('spec.target', undefined, 'expected { alias, bootstrapServers, ... }')
  const connectCluster = typeof spec.connectCluster === 'string' ? spec.connectCluster : undefined
  if (target === undefined && connectCluster !== undefined) {
    if (!byAlias.has(connectCluster)) problems.add('spec.connectCluster', connectCluster, 'names no alias of spec.clusters; name the target cluster')
    target = connectCluster
  }
  if (target === undefined && (v1 || connectCluster === undefined)) {
    problems.add('spec.target', undefined, 'missing; give the target cluster { alias, bootstrapServers }')
  }
  if (!Array.isArray(spec.mirrors) || spec.mirrors.length === 0) {
    problems.add('spec.mirrors', undefined, 'missing; give at least one mirror with its source cluster')
    return
  }
  spec.mirrors.forEach((mirror: unknown, i) => {
    const field = `spec.mirrors[${i}]`
    if (!isNode(mirror)) { problems.add(field, undefined, 'expected { source, topicsPattern, ... }'); return }
    for (const name of Object.keys(mirror)) {
      if (!MIRROR_FIELDS.includes(name)) {
        problems.add(`${field}.${name}`, undefined, 'is not a field of a KafkaMirrorMaker2 mirror; remove it or fix its name')
      } else if (v1 && ['sourceCluster', 'targetCluster', 'heartbeatConnector', 'topicsBlacklistPattern', 'groupsBlacklistPattern'].includes(name)) {
        problems.add(`${field}.${name}`, undefined, 'is not in kafka.strimzi.io/v1; use source (a cluster), topicsExcludePattern and groupsExcludePattern')
      }
    }
    let source: string | undefined
    if (isNode(mirror.source)) source = translation.cluster(mirror.source, `${field}.source`)
    else if (typeof mirror.sourceCluster === 'string') {
      source = mirror.sourceCluster
      if (!byAlias.has(source)) problems.add(`${field}.sourceCluster`, source, 'names no alias of spec.clusters; add the cluster or fix the alias')
    } else problems.add(`${field}.source`, undefined, 'missing; give the source cluster { alias, bootstrapServers }')
    const targetCluster = typeof mirror.targetCluster === 'string' ? mirror.targetCluster : undefined
    if (targetCluster !== undefined && targetCluster !== target) {
      problems.add(
        `${field}.targetCluster`,
        targetCluster,
        `is not the target cluster ${target ?? '(none)'}; MirrorMaker 2 (and the sidecar) mirror into the Connect cluster's target only`
      )
    }
    if (source !== undefined && target !== undefined) translation.mirror(mirror, field, source, target)
  })
}
