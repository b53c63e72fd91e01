import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { connectionFromProperties } from '../../../src/config/client-properties.js'
import type { GssapiSettings } from '../../../src/config/cluster-connection.js'
import { parseProperties } from '../../../src/config/java-properties.js'
import { keytabEntries } from '../../../src/config/keytab-file.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { printableConfig } from '../../../src/config/print-config.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import { ProblemList } from '../../../src/config/values.js'
import { writeProperties } from '../../helpers/sidecar.js'

const MODULE = 'com.sun.security.auth.module.Krb5LoginModule'
const KEY = Buffer.from('00112233445566778899aabbccddeeff', 'hex')

/** A keytab in MIT's 0x0502 format holding one key per principal (what kadmin ktadd writes), built byte by byte. */
function keytab (principals: string[]): Buffer {
  const counted = (text: string): Buffer => {
    const b = Buffer.alloc(2)
    b.writeUInt16BE(Buffer.byteLength(text))
    return Buffer.concat([b, Buffer.from(text)])
  }
  const entries = principals.map(principal => {
    const [name = '', realm = ''] = principal.split('@')
    const parts = name.split('/')
    const head = Buffer.alloc(2); head.writeUInt16BE(parts.length)
    const tail = Buffer.alloc(4 + 4 + 1 + 2 + 2)
    tail.writeUInt32BE(1, 0)
    tail.writeUInt32BE(1_700_000_000, 4)
    tail.writeUInt8(3, 8)
    tail.writeUInt16BE(18, 9)
    tail.writeUInt16BE(KEY.length, 11)
    const vno = Buffer.alloc(4); vno.writeUInt32BE(3)
    const body = Buffer.concat([head, counted(realm), ...parts.map(counted), tail, KEY, vno])
    const size = Buffer.alloc(4); size.writeInt32BE(body.length)
    return Buffer.concat([size, body])
  })
  return Buffer.concat([Buffer.from([0x05, 0x02]), ...entries])
}

function folder (t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'kerberos-config-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function read (entries: Record<string, string>): { problems: ProblemList, sasl: GssapiSettings | undefined } {
  const problems = new ProblemList()
  const text =
    Object.entries({
      'bootstrap.servers': 'kafka1.example.com:9092',
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'GSSAPI',
      'sasl.kerberos.service.name': 'kafka',
      ...entries,
    })
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n'
  const connection = connectionFromProperties(
    parseProperties(text),
    { where: 'c.properties: ', alias: 'source', defaultClientId: 'x', bootstrapHint: '' },
    problems
  )
  return { problems, sasl: connection?.sasl as GssapiSettings | undefined }
}

const lines = (problems: ProblemList): string[] => problems.problems.map(p => `${p.key}${p.value === undefined ? '' : ` "${p.value}"`}: ${p.message}`)

test('keytab entries: principals with their instances and realms, key versions, holes skipped; not a keytab is refused', () => {
  const bytes = keytab(['mirror@EXAMPLE.COM', 'kafka/broker1.example.com@EXAMPLE.COM'])
  const hole = Buffer.alloc(4 + 8); hole.writeInt32BE(-8)
  const entries = keytabEntries(Buffer.concat([bytes.subarray(0, 2), hole, bytes.subarray(2)]))
  assert.deepEqual(entries, [
    { principal: 'mirror@EXAMPLE.COM', keyVersion: 3, encryptionType: 18 },
    { principal: 'kafka/broker1.example.com@EXAMPLE.COM', keyVersion: 3, encryptionType: 18 },
  ])
  assert.throws(() => keytabEntries(Buffer.from('[libdefaults]\n')), /does not start with a keytab version/)
  assert.throws(() => keytabEntries(bytes.subarray(0, bytes.length - 10)), /ends inside an entry/)
})

test('GSSAPI from Java client keys: keytab and principal, service name; print-config shows the keytab path, never its content', t => {
  const path = join(folder(t), 'mirror.keytab')
  writeFileSync(path, keytab(['mirror@EXAMPLE.COM']))
  const { problems, sasl } = read({ 'sasl.jaas.config': `${MODULE} required useKeyTab=true storeKey=true keyTab="${path}" principal="mirror@EXAMPLE.COM";` })
  assert.deepEqual(lines(problems), [])
  assert.deepEqual(
    { ...sasl },
    {
      mechanism: 'gssapi',
      serviceName: 'kafka',
      principal: 'mirror@EXAMPLE.COM',
      credentials: 'keytab',
      keyTab: path,
      jaasKey: 'c.properties: sasl.jaas.config',
    }
  )
  // A principal without its realm matches the keytab's (Java adds the default realm).
  assert.deepEqual(lines(read({ 'sasl.jaas.config': `${MODULE} required useKeyTab=true keyTab="${path}" principal="mirror";` }).problems), [])
  // A ticket cache alone; serviceName from the JAAS options as Kafka also reads it.
  const cache = read({ 'sasl.kerberos.service.name': '', 'sasl.jaas.config': `${MODULE} required useTicketCache=true serviceName="kafka";` })
  assert.deepEqual(lines(cache.problems), [])
  assert.deepEqual({ ...cache.sasl }, { mechanism: 'gssapi', serviceName: 'kafka', credentials: 'ticket-cache', jaasKey: 'c.properties: sasl.jaas.config' })
  const file = writeProperties({
    clusters: 'A, B',
    'A.bootstrap.servers': '127.0.0.1:1',
    'B.bootstrap.servers': '127.0.0.1:2',
    'A->B.enabled': 'true',
    'A.security.protocol': 'SASL_PLAINTEXT',
    'A.sasl.mechanism': 'GSSAPI',
    'A.sasl.kerberos.service.name': 'kafka',
    'A.sasl.jaas.config': `${MODULE} required useKeyTab=true storeKey=true keyTab="${path}" principal="mirror@EXAMPLE.COM";`,
  }, 'mm2.properties')
  const config = configFromMm2(file, { settings: sidecarSettingsFromFlags({}, new ProblemList()) })
  assert.equal(config.flows[0]?.target.sasl, undefined)
  const shown = printableConfig(config) as { flows: Array<{ source: { sasl: unknown } }> }
  assert.deepEqual(shown.flows[0]?.source.sasl, {
    mechanism: 'GSSAPI',
    serviceName: 'kafka',
    principal: 'mirror@EXAMPLE.COM',
    credentials: 'keytab',
    keyTab: path,
  })
  assert.equal((config.flows[0]?.source.sasl as GssapiSettings).jaasKey, 'A.sasl.jaas.config')
})

test('GSSAPI is Java\'s default mechanism: no sasl.mechanism with Krb5LoginModule is Kerberos; with another login module, one line says to set it', t => {
  const path = join(folder(t), 'mirror.keytab')
  writeFileSync(path, keytab(['mirror@EXAMPLE.COM']))
  const problems = new ProblemList()
  const text = [
    'bootstrap.servers=k:9092',
    'security.protocol=SASL_PLAINTEXT',
    'sasl.kerberos.service.name=kafka',
    `sasl.jaas.config=${MODULE} required useKeyTab=true keyTab="${path}" principal="mirror@EXAMPLE.COM";`,
  ].join('\n')
  const connection = connectionFromProperties(parseProperties(text), { where: '', alias: 'source', defaultClientId: 'x', bootstrapHint: '' }, problems)
  assert.deepEqual([lines(problems), connection?.sasl?.mechanism], [[], 'gssapi'])
  const scram = new ProblemList()
  connectionFromProperties(
    parseProperties(
      [
        'bootstrap.servers=k:9092',
        'security.protocol=SASL_PLAINTEXT',
        'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p-secret-3";',
      ].join('\n')
    ),
    { where: '', alias: 'source', defaultClientId: 'x', bootstrapHint: '' },
    scram
  )
  assert.deepEqual(lines(scram), [
    "sasl.mechanism: missing, so Java's default GSSAPI (Kerberos) applies, which does not fit org.apache.kafka.common.security.scram.ScramLoginModule in sasl.jaas.config; set sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM or GSSAPI)",
  ])
})

test('GSSAPI mistakes: one line each naming the key and what to do, before anything connects; no JAAS value repeated', t => {
  const dir = folder(t)
  const path = join(dir, 'other.keytab')
  writeFileSync(path, keytab(['other@EXAMPLE.COM', 'kafka/b1@EXAMPLE.COM']))
  const notKeytab = join(dir, 'krb5.conf')
  writeFileSync(notKeytab, '[libdefaults]\n')
  const jaas = (options: string): Record<string, string> => ({ 'sasl.jaas.config': `${MODULE} required ${options};` })
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [
      jaas(`useKeyTab=true keyTab="${join(dir, 'missing.keytab')}" principal="mirror@EXAMPLE.COM"`),
      'c.properties: sasl.jaas.config',
      /^option keyTab ".*missing\.keytab" does not exist; give the path of the client's keytab file/,
    ],
    [jaas(`useKeyTab=true keyTab="${dir}" principal="mirror@EXAMPLE.COM"`), 'c.properties: sasl.jaas.config', /^option keyTab ".*" is a folder/],
    [
      jaas(`useKeyTab=true keyTab="${notKeytab}" principal="mirror@EXAMPLE.COM"`),
      'c.properties: sasl.jaas.config',
      /^option keyTab ".*krb5\.conf" is not a Kerberos keytab/,
    ],
    [
      jaas(`useKeyTab=true keyTab="${path}" principal="mirror@EXAMPLE.COM"`),
      'c.properties: sasl.jaas.config',
      /^the keytab ".*other\.keytab" has no key of principal "mirror@EXAMPLE\.COM" \(it holds keys of other@EXAMPLE\.COM, kafka\/b1@EXAMPLE\.COM only\); set principal to one of them, or export/,
    ],
    [jaas('useKeyTab=true principal="mirror@EXAMPLE.COM"'), 'c.properties: sasl.jaas.config', /^has useKeyTab=true but no keyTab option/],
    [jaas(`useKeyTab=true keyTab="${path}"`), 'c.properties: sasl.jaas.config', /^has useKeyTab=true but no principal option/],
    [jaas('storeKey=true'), 'c.properties: sasl.jaas.config', /^has neither useKeyTab=true nor useTicketCache=true, so Java would prompt for a password/],
    [jaas('useTicketCache=true useFirstPass=true'), 'c.properties: sasl.jaas.config', /^has the option useFirstPass, which takes a password/],
    [jaas('useTicketCache=true keytab="x"'), 'c.properties: sasl.jaas.config', /^has the option keytab, which Krb5LoginModule does not know/],
    [jaas('useTicketCache=yes'), 'c.properties: sasl.jaas.config option useTicketCache', /^expected true or false/],
    [
      jaas(`useTicketCache=true ticketCache="${join(dir, 'krb5cc_none')}"`),
      'c.properties: sasl.jaas.config',
      /^option ticketCache ".*krb5cc_none" does not exist; run kinit -c/,
    ],
    [jaas('useTicketCache=true isInitiator=false'), 'c.properties: sasl.jaas.config', /^option isInitiator is false/],
    [
      { 'sasl.kerberos.service.name': '', ...jaas('useTicketCache=true') },
      'c.properties: sasl.kerberos.service.name',
      /^missing for GSSAPI; set it to the primary of the brokers' Kerberos principals/,
    ],
    [
      { 'sasl.kerberos.service.name': 'kafka/b1@EXAMPLE.COM', ...jaas('useTicketCache=true') },
      'c.properties: sasl.kerberos.service.name',
      /^is the primary of the brokers' principals only/,
    ],
    [
      { 'sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p-secret-1";' },
      'c.properties: sasl.jaas.config',
      /^uses org\.apache\.kafka\.common\.security\.plain\.PlainLoginModule, which does not fit sasl\.mechanism=GSSAPI/,
    ],
    [{}, 'c.properties: sasl.jaas.config', /^missing for GSSAPI; set it to com\.sun\.security\.auth\.module\.Krb5LoginModule required useKeyTab=true/],
  ]
  for (const [entries, key, message] of cases) {
    const { problems, sasl } = read(entries)
    assert.equal(sasl, undefined, JSON.stringify(entries))
    assert.equal(problems.problems.length, 1, `${JSON.stringify(entries)}: ${lines(problems).join(' | ')}`)
    const problem = problems.problems[0]
    assert.equal(problem?.key, key, JSON.stringify(entries))
    assert.match(problem?.message ?? '', message)
    assert.doesNotMatch(lines(problems).join('\n'), /p-secret/)
  }
})
