import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { spawnSidecarArgs } from '../helpers/sidecar.js'

interface Case {
  readonly name: string
  /** Command line; `{broker}` becomes the counting server's host:port. */
  readonly args: (dir: string, broker: string) => string[]
  /** Text the one error line must contain: the key, the value and what to do. */
  readonly expect: readonly string[]
}

function file (dir: string, name: string, lines: Record<string, string>): string {
  const path = join(dir, name)
  writeFileSync(path, Object.entries(lines).map(([k, v]) => `${k}=${v}`).join('\n') + '\n')
  return path
}

function script (dir: string, name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

const mm2Base = (broker: string): Record<string, string> => ({
  clusters: 'A, B',
  'A.bootstrap.servers': broker,
  'B.bootstrap.servers': broker,
  'A->B.enabled': 'true',
})
const mm2 = (dir: string, broker: string, extra: Record<string, string>, drop: string[] = []): string[] => {
  const lines = { ...mm2Base(broker), ...extra }
  for (const key of drop) delete lines[key as keyof typeof lines]
  return [file(dir, 'mm2.properties', lines)]
}
const mm1 = (
  dir: string,
  broker: string,
  consumer: Record<string, string>,
  producer: Record<string, string> = {},
  flags: string[] = ['--whitelist', '.*']
): string[] => [
  '--consumer.config',
  file(dir, 'source.properties', { 'bootstrap.servers': broker, ...consumer }),
  '--producer.config',
  file(dir, 'target.properties', { 'bootstrap.servers': broker, ...producer }),
  ...flags,
]
const jaas = (module: string, rest: string): string => `org.apache.kafka.common.security.${module} required ${rest}`
const SCRAM = 'scram.ScramLoginModule'

const CASES: Case[] = [
  { name: 'tasks.max not a number', args: (d, b) => mm2(d, b, { 'tasks.max': 'two' }), expect: ['tasks.max', '"two"', 'positive integer'] },
  { name: 'tasks.max zero per flow', args: (d, b) => mm2(d, b, { 'A->B.tasks.max': '0' }), expect: ['A->B.tasks.max', '"0"', 'positive integer'] },
  {
    name: 'refresh interval negative',
    args: (d, b) => mm2(d, b, { 'refresh.topics.interval.seconds': '-5' }),
    expect: ['refresh.topics.interval.seconds', '"-5"'],
  },
  {
    name: 'replication.factor zero',
    args: (d, b) => mm2(d, b, { 'replication.factor': '0' }),
    expect: ['replication.factor', '"0"', '-1 for the broker default'],
  },
  { name: 'bad boolean', args: (d, b) => mm2(d, b, { 'sync.group.offsets.enabled': 'yes' }), expect: ['sync.group.offsets.enabled', '"yes"', 'true or false'] },
  { name: 'bad topics regex', args: (d, b) => mm2(d, b, { 'A->B.topics': 'orders[' }), expect: ['A->B.topics', '"orders["', 'not a valid regex'] },
  { name: 'Java-only regex', args: (d, b) => mm2(d, b, { 'topics.exclude': 'a++' }), expect: ['topics.exclude', 'Java-only regex'] },
  { name: 'bad groups regex', args: (d, b) => mm2(d, b, { groups: '(unclosed' }), expect: ['groups', '"(unclosed"', 'not a valid regex'] },
  { name: 'unknown alias in a flow', args: (d, b) => mm2(d, b, { 'A->C.enabled': 'true' }), expect: ['A->C.enabled', '"C"', 'not in clusters'] },
  { name: 'flow into itself', args: (d, b) => mm2(d, b, { 'A->A.enabled': 'true' }), expect: ['A->A.enabled', 'into itself'] },
  {
    name: 'missing bootstrap for an enabled flow',
    args: (d, b) => mm2(d, b, {}, ['B.bootstrap.servers']),
    expect: ['B.bootstrap.servers', 'missing', 'set B.bootstrap.servers'],
  },
  {
    name: 'bad bootstrap servers',
    args: (d, b) => mm2(d, b, { 'A.bootstrap.servers': 'localhost' }),
    expect: ['A.bootstrap.servers', '"localhost"', 'host:port'],
  },
  { name: 'missing clusters', args: (d, b) => mm2(d, b, {}, ['clusters']), expect: ['clusters', 'missing'] },
  { name: 'no enabled flow', args: (d, b) => mm2(d, b, { 'A->B.enabled': 'false' }), expect: ['clusters', 'no flow is enabled'] },
  {
    name: 'custom replication policy',
    args: (d, b) => mm2(d, b, { 'replication.policy.class': 'com.acme.MyPolicy' }),
    expect: ['replication.policy.class', '"com.acme.MyPolicy"', 'IdentityReplicationPolicy'],
  },
  { name: 'custom topic filter class', args: (d, b) => mm2(d, b, { 'topic.filter.class': 'com.acme.Filter' }), expect: ['topic.filter.class', 'use topics'] },
  { name: '--clusters names an unknown alias', args: (d, b) => [...mm2(d, b, {}), '--clusters', 'Z'], expect: ['--clusters', '"Z"', 'not in clusters'] },
  { name: '--clusters without mm2 file', args: (d, b) => [...mm1(d, b, {}), '--clusters', 'B'], expect: ['--clusters', 'mm2.properties'] },
  {
    name: 'MM1 flag with an mm2 file',
    args: (d, b) => [...mm2(d, b, {}), '--whitelist', 'x'],
    expect: ['--whitelist', 'cannot be combined with an mm2.properties file'],
  },
  { name: 'unreadable mm2 file', args: d => [join(d, 'missing.properties')], expect: ['mm2.properties', 'missing.properties', 'file not found'] },
  {
    name: 'two flows share a group',
    args: (d, b) => mm2(d, b, { clusters: 'A, B, C', 'C.bootstrap.servers': b, 'A->C.enabled': 'true', 'A.consumer.group.id': 'shared' }),
    expect: ['consumer.group.id', '"shared"', 'own group.id'],
  },
  {
    name: 'truststore that is no key store',
    args: (d, b) => mm1(d, b, { 'security.protocol': 'SSL', 'ssl.truststore.location': file(d, 'trust.jks', {}), 'ssl.truststore.type': 'JKS' }),
    expect: ['ssl.truststore.location', 'trust.jks', 'cannot be read as a JKS store'],
  },
  {
    name: 'keystore that is no key store',
    args: (d, b) => mm1(d, b, { 'security.protocol': 'SSL', 'ssl.keystore.location': file(d, 'key.jks', {}), 'ssl.keystore.password': 'ks-secret-1' }),
    expect: ['ssl.keystore.location', 'key.jks', 'is not a key store'],
  },
  {
    name: 'unreadable truststore',
    args: (d, b) => mm1(d, b, { 'security.protocol': 'SSL', 'ssl.truststore.location': join(d, 'nope.pem'), 'ssl.truststore.type': 'PEM' }),
    expect: ['ssl.truststore.location', 'nope.pem', 'file not found'],
  },
  {
    name: 'truststore without certificates',
    args: (d, b) => mm1(d, b, { 'security.protocol': 'SSL', 'ssl.truststore.location': file(d, 'empty.pem', { a: 'b' }), 'ssl.truststore.type': 'PEM' }),
    expect: ['ssl.truststore.location', 'no PEM certificate'],
  },
  { name: 'unknown security protocol', args: (d, b) => mm1(d, b, { 'security.protocol': 'TLS' }), expect: ['security.protocol', '"TLS"', 'SASL_SSL'] },
  {
    name: 'GSSAPI by default',
    args: (d, b) => mm1(d, b, { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.jaas.config': jaas(SCRAM, 'username="u" password="p-secret-9";') }),
    expect: ['sasl.mechanism', 'GSSAPI', 'SCRAM-SHA-512'],
  },
  {
    name: 'OAUTHBEARER without sasl.jaas.config',
    args: (d, b) => mm1(d, b, { 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'OAUTHBEARER' }),
    expect: ['sasl.jaas.config', 'missing for OAUTHBEARER', 'OAuthBearerLoginModule required clientId='],
  },
  {
    name: 'JAAS line without semicolon',
    args: (d, b) =>
      mm1(d, b, {
        'security.protocol': 'SASL_PLAINTEXT',
        'sasl.mechanism': 'SCRAM-SHA-512',
        'sasl.jaas.config': jaas(SCRAM, 'username="u" password="p-secret-9"'),
      }),
    expect: ['sasl.jaas.config', 'semicolon'],
  },
  {
    name: 'JAAS line with unclosed quote',
    args: (d, b) =>
      mm1(d, b, {
        'security.protocol': 'SASL_PLAINTEXT',
        'sasl.mechanism': 'SCRAM-SHA-512',
        'sasl.jaas.config': jaas(SCRAM, 'username="u" password="p-secret-9;'),
      }),
    expect: ['sasl.jaas.config', 'not closed'],
  },
  {
    name: 'JAAS module does not fit the mechanism',
    args: (d, b) =>
      mm1(d, b, { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': jaas(SCRAM, 'username="u" password="p-secret-9";') }),
    expect: ['sasl.jaas.config', 'PlainLoginModule'],
  },
  {
    name: 'JAAS line without password',
    args: (d, b) => mm1(d, b, { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'SCRAM-SHA-256', 'sasl.jaas.config': jaas(SCRAM, 'username="u";') }),
    expect: ['sasl.jaas.config', 'no password'],
  },
  {
    name: 'JAAS config with PLAINTEXT',
    args: (d, b) => mm1(d, b, {}, { 'sasl.jaas.config': jaas(SCRAM, 'username="u" password="p-secret-9";') }),
    expect: ['sasl.jaas.config', 'security.protocol=SASL_SSL'],
  },
  {
    name: 'missing env reference',
    args: (d, b) =>
      mm1(d, b, {
        'security.protocol': 'SASL_SSL',
        'sasl.mechanism': 'PLAIN',
        'sasl.jaas.config': jaas('plain.PlainLoginModule', 'username="u" password="${env:MIRROR_TEST_UNSET_PW}";'),
      }),
    expect: ['sasl.jaas.config', 'MIRROR_TEST_UNSET_PW', 'is not set'],
  },
  {
    name: 'missing file reference',
    args: (d, b) => mm1(d, b, { 'ssl.key.password': `\${file:${join(d, 'secrets.properties')}:key}` }),
    expect: ['ssl.key.password', 'secrets.properties', 'cannot read'],
  },
  {
    name: 'custom config provider',
    args: (d, b) => mm1(d, b, { 'config.providers': 'vault', 'config.providers.vault.class': 'com.acme.Vault' }),
    expect: ['config.providers.vault.class', 'com.acme.Vault'],
  },
  {
    name: 'Java callback handler',
    args: (d, b) => mm1(d, b, { 'sasl.login.callback.handler.class': 'com.acme.Login' }),
    expect: ['sasl.login.callback.handler.class', 'Java classes'],
  },
  {
    name: 'bad endpoint identification',
    args: (d, b) => mm1(d, b, { 'security.protocol': 'SSL', 'ssl.endpoint.identification.algorithm': 'http' }),
    expect: ['ssl.endpoint.identification.algorithm', '"http"'],
  },
  {
    name: 'conflicting aliases',
    args: (d, b) => mm1(d, b, {}, {}, ['--whitelist', 'a', '--include', 'b']),
    expect: ['--include', '"b"', 'conflicts with --whitelist'],
  },
  {
    name: 'Java message handler',
    args: (d, b) => mm1(d, b, {}, {}, ['--whitelist', 'a', '--message.handler', 'com.acme.Handler']),
    expect: ['--message.handler', '"com.acme.Handler"', 'Java cannot run here', 'JavaScript module'],
  },
  {
    name: 'missing message handler',
    args: (d, b) => mm1(d, b, {}, {}, ['--whitelist', 'a', '--message.handler', join(d, 'nope.mjs')]),
    expect: ['--message.handler', 'nope.mjs', 'file not found'],
  },
  {
    name: 'message handler without a function',
    args: (d, b) => mm1(d, b, {}, {}, ['--whitelist', 'a', '--message.handler', script(d, 'h.mjs', 'export const version = 1\n')]),
    expect: ['--message.handler', 'h.mjs', 'exports no handler function (it exports version)', 'export function handle'],
  },
  {
    name: 'message handler with a syntax error',
    args: (d, b) => mm1(d, b, {}, {}, ['--whitelist', 'a', '--message.handler', script(d, 'h.cjs', 'module.exports = (r) => {\n')]),
    expect: ['--message.handler', 'h.cjs', 'cannot be loaded: SyntaxError', 'h.cjs line 2', 'fix the module'],
  },
  {
    name: 'message handler in mm2.properties',
    args: (d, b) => mm2(d, b, { 'A->B.message.handler': join(d, 'gone.js') }),
    expect: ['A->B.message.handler', 'gone.js', 'file not found'],
  },
  {
    name: 'consumer config is a folder',
    args: (d, b) => {
      const p = join(d, 'conf.d')
      mkdirSync(p)
      return ['--consumer.config', p, '--producer.config', file(d, 't.properties', { 'bootstrap.servers': b }), '--whitelist', 'a']
    },
    expect: ['--consumer.config', 'conf.d', 'cannot read it'],
  },
  {
    name: 'acks=1 in the producer config',
    args: (d, b) => mm1(d, b, {}, { acks: '1' }),
    expect: ['acks "1"', 'leader alone', 'set acks=all'],
  },
  {
    name: 'acks=0 in the producer config',
    args: (d, b) => mm1(d, b, {}, { acks: '0' }),
    expect: ['acks "0"', 'no acknowledgement', 'set acks=all'],
  },
  {
    name: 'idempotent producer with more than 5 requests in flight',
    args: (d, b) => mm1(d, b, {}, { 'max.in.flight.requests.per.connection': '10' }),
    expect: ['max.in.flight.requests.per.connection "10"', 'at most 5', 'set 5 or less'],
  },
  {
    name: 'acks=1 as mm2.properties <cluster>.producer.acks',
    args: (d, b) => mm2(d, b, { 'B.producer.acks': '1' }),
    expect: ['B.producer.acks "1"', 'set acks=all'],
  },
  {
    name: 'acks=1 as mm2.properties producer.acks',
    args: (d, b) => mm2(d, b, { 'producer.acks': '1' }),
    expect: ['producer.acks "1"', 'set acks=all'],
  },
  {
    name: 'exactly-once without idempotence',
    args: (d, b) => mm2(d, b, { 'B.exactly.once.source.support': 'enabled', 'B.producer.enable.idempotence': 'false' }),
    expect: ['B.producer.enable.idempotence "false"', 'transactions need the idempotent producer', 'set it to true'],
  },
  {
    name: 'acks=1 in a Strimzi target config',
    args: (d, b) => [
      '--strimzi',
      script(
        d,
        'kmm2.yaml',
        `apiVersion: kafka.strimzi.io/v1
kind: KafkaMirrorMaker2
metadata:
  name: m
spec:
  replicas: 1
  target:
    alias: tgt
    bootstrapServers: ${b}
    groupId: m
    config:
      producer.acks: "1"
  mirrors:
    - source:
        alias: src
        bootstrapServers: ${b}
      topicsPattern: "a"
`
      ),
    ],
    expect: ['producer.acks "1"', 'set acks=all'],
  },
  {
    name: 'bad num.streams',
    args: (d, b) => mm1(d, b, {}, {}, ['--whitelist', 'a', '--num.streams', 'abc']),
    expect: ['--num.streams', '"abc"', 'positive integer'],
  },
]

test(`${CASES.length} malformed configurations each exit 2 with one line, before any connection`, { timeout: 120_000 }, async t => {
  assert.ok(CASES.length >= 30)
  let connections = 0
  const server = createServer(socket => { connections++; socket.destroy() })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>(resolve => server.close(() => resolve())))
  const broker = `127.0.0.1:${(server.address() as AddressInfo).port}`
  for (const c of CASES) {
    const dir = mkdtempSync(join(tmpdir(), 'mirror-bad-'))
    const sidecar = spawnSidecarArgs(t, c.args(dir, broker))
    const code = await sidecar.exited
    const stderr = sidecar.stderr()
    assert.equal(code, 2, `${c.name}: exit code; stderr:\n${stderr}`)
    const lines = stderr.trim().split('\n').filter(line => !line.startsWith('{'))
    assert.equal(lines.length, 1, `${c.name}: one error line, got:\n${stderr}`)
    for (const part of c.expect) assert.ok(lines[0]?.includes(part), `${c.name}: "${part}" missing in: ${lines[0]}`)
    assert.doesNotMatch(stderr, /\n\s+at .+\(.+:\d+:\d+\)/, `${c.name}: no stack trace`)
    assert.doesNotMatch(stderr, /p-secret-9|ks-secret-1/, `${c.name}: no secret in the message`)
  }
  assert.equal(connections, 0, 'no configuration error may open a connection')
})
