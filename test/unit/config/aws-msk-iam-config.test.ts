import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { regionOfHost } from '../../../src/config/aws-msk-iam-config.js'
import { connectionFromProperties } from '../../../src/config/client-properties.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import type { AwsMskIamSettings } from '../../../src/config/cluster-connection.js'
import { parseProperties } from '../../../src/config/java-properties.js'
import { ProblemList } from '../../../src/config/values.js'
import { writeProperties } from '../../helpers/sidecar.js'

const MODULE = 'software.amazon.msk.auth.iam.IAMLoginModule'
const HANDLER = 'software.amazon.msk.auth.iam.IAMClientCallbackHandler'
const MSK_HOST = 'b-1.mirror.abc123.c2.kafka.us-west-2.amazonaws.com:9098'
const SIDECAR_BIN = fileURLToPath(new URL('../../../src/bin/mirror-sidecar.js', import.meta.url))
// The region variables of the machine running the tests would change the fallback region: each test sets its own.
delete process.env.AWS_REGION
delete process.env.AWS_DEFAULT_REGION

function read (entries: Record<string, string>): { problems: ProblemList, sasl: AwsMskIamSettings | undefined } {
  const problems = new ProblemList()
  const text =
    Object.entries({
      'bootstrap.servers': MSK_HOST,
      'security.protocol': 'SASL_SSL',
      'sasl.mechanism': 'AWS_MSK_IAM',
      'sasl.client.callback.handler.class': HANDLER,
      ...entries,
    })
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n'
  const connection = connectionFromProperties(
    parseProperties(text),
    { where: 'c.properties: ', alias: 'source', defaultClientId: 'x', bootstrapHint: '' },
    problems
  )
  return { problems, sasl: connection?.sasl as AwsMskIamSettings | undefined }
}

test('regionOfHost: MSK provisioned and serverless host names, none for others', () => {
  assert.equal(regionOfHost('b-1.mirror.abc123.c2.kafka.us-west-2.amazonaws.com'), 'us-west-2')
  assert.equal(regionOfHost('boot-abcd.c1.kafka-serverless.eu-central-1.amazonaws.com'), 'eu-central-1')
  assert.equal(regionOfHost('b-2.x.y.kafka.cn-north-1.amazonaws.com.cn'), 'cn-north-1')
  assert.equal(regionOfHost('b-2.x.y.kafka.us-gov-west-1.amazonaws.com'), 'us-gov-west-1')
  assert.equal(regionOfHost('127.0.0.1'), undefined)
  assert.equal(regionOfHost('kafka.internal.example.com'), undefined)
})

test('AWS_MSK_IAM from Java client keys: the IAMLoginModule options, the callback handler accepted', () => {
  const plain = read({ 'sasl.jaas.config': `${MODULE} required;` })
  assert.deepEqual(plain.problems.problems, [])
  assert.deepEqual(plain.problems.ignored, [], 'the callback handler is read, not ignored')
  assert.deepEqual({ ...plain.sasl }, { mechanism: 'aws_msk_iam', debugCreds: false, jaasKey: 'c.properties: sasl.jaas.config' })
  const role = read({
    'sasl.jaas.config': `${MODULE} required awsProfileName="mirror" awsRoleArn="arn:aws:iam::123456789012:role/mirror" awsRoleSessionName="s1" awsStsRegion="us-west-2" awsDebugCreds=true;`,
  })
  assert.deepEqual(role.problems.problems, [])
  assert.deepEqual(
    [role.sasl?.profileName, role.sasl?.roleArn, role.sasl?.roleSessionName, role.sasl?.stsRegion, role.sasl?.debugCreds],
    ['mirror', 'arn:aws:iam::123456789012:role/mirror', 's1', 'us-west-2', true]
  )
})

test('AWS_MSK_IAM mistakes: one line each naming the key, the value and what to do', () => {
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [
      { 'sasl.jaas.config': `${MODULE} required awsProfile="x";` },
      'sasl.jaas.config',
      /option awsProfile, which the sidecar does not support; use only awsProfileName, awsRoleArn/,
    ],
    [{ 'sasl.jaas.config': `${MODULE} required awsRoleArn="mirror";` }, 'sasl.jaas.config', /awsRoleArn "mirror" is not a role ARN/],
    [{ 'sasl.jaas.config': `${MODULE} required awsDebugCreds="yes";` }, 'sasl.jaas.config option awsDebugCreds', /expected true or false/],
    [{ 'sasl.jaas.config': `${MODULE} required awsStsRegion="west";` }, 'sasl.jaas.config', /awsStsRegion "west" is not an AWS region/],
    [
      { 'sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";' },
      'sasl.jaas.config',
      /does not fit sasl\.mechanism=AWS_MSK_IAM/,
    ],
    [
      { 'sasl.client.callback.handler.class': 'com.example.Handler', 'sasl.jaas.config': `${MODULE} required;` },
      'sasl.client.callback.handler.class',
      /Java classes cannot be loaded here; use software\.amazon\.msk\.auth\.iam\.IAMClientCallbackHandler/,
    ],
    [{}, 'sasl.jaas.config', /^missing for AWS_MSK_IAM/],
  ]
  for (const [entries, key, message] of cases) {
    const { problems, sasl } = read(entries)
    assert.equal(sasl, undefined)
    assert.ok(problems.problems.some(p => p.key === `c.properties: ${key}` && message.test(p.message)), `${key}: ${JSON.stringify(problems.problems)}`)
  }
})

test('AWS_MSK_IAM: a bootstrap server without a region in its name needs AWS_REGION or awsStsRegion', () => {
  const saved = [process.env.AWS_REGION, process.env.AWS_DEFAULT_REGION]
  delete process.env.AWS_REGION
  delete process.env.AWS_DEFAULT_REGION
  try {
    const missing = read({ 'bootstrap.servers': `${MSK_HOST},10.0.0.7:9098`, 'sasl.jaas.config': `${MODULE} required;` })
    assert.deepEqual(missing.problems.problems.map(p => [p.key, p.value]), [['c.properties: bootstrap.servers', '10.0.0.7:9098']])
    assert.match(
      missing.problems.problems[0]?.message ?? '',
      /names no AWS region .*; set AWS_REGION or awsStsRegion="REGION" in c\.properties: sasl\.jaas\.config$/
    )
    const sts = read({ 'bootstrap.servers': '10.0.0.7:9098', 'sasl.jaas.config': `${MODULE} required awsStsRegion="eu-west-1";` })
    assert.deepEqual(sts.problems.problems, [])
    assert.equal(sts.sasl?.fallbackRegion, 'eu-west-1')
    process.env.AWS_REGION = 'ap-south-1'
    const env = read({ 'bootstrap.servers': '10.0.0.7:9098', 'sasl.jaas.config': `${MODULE} required awsStsRegion="eu-west-1";` })
    assert.equal(env.sasl?.fallbackRegion, 'ap-south-1')
  } finally {
    for (const [i, name] of ['AWS_REGION', 'AWS_DEFAULT_REGION'].entries()) {
      if (saved[i] === undefined) delete process.env[name]
      else process.env[name] = saved[i]
    }
  }
})

test('mirror-sidecar: an unknown IAMLoginModule option and a missing region exit 2 with one line each, before connecting', () => {
  const dir = mkdtempSync(join(tmpdir(), 'msk-iam-'))
  try {
    const write = (name: string, lines: string[]): string => { const path = join(dir, name); writeFileSync(path, lines.join('\n') + '\n'); return path }
    const source = write('source.properties', [
      'bootstrap.servers=127.0.0.1:1',
      'security.protocol=SASL_SSL',
      'sasl.mechanism=AWS_MSK_IAM',
      `sasl.jaas.config=${MODULE} required awsRoleArnn="arn:aws:iam::123456789012:role/x";`,
    ])
    const target = write('target.properties', [
      'bootstrap.servers=127.0.0.1:2',
      'security.protocol=SASL_SSL',
      'sasl.mechanism=AWS_MSK_IAM',
      `sasl.jaas.config=${MODULE} required;`,
      `sasl.client.callback.handler.class=${HANDLER}`,
    ])
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MIRROR_') && !name.startsWith('AWS_')))
    const result = spawnSync(process.execPath, [SIDECAR_BIN, '--consumer.config', source, '--producer.config', target, '--whitelist', 'a'], {
      encoding: 'utf8',
      timeout: 30_000,
      env,
    })
    assert.equal(result.status, 2, result.stderr)
    const lines = result.stderr.split('\n').filter(line => line.includes('.properties'))
    assert.ok(
      lines.some(line => /source\.properties: sasl\.jaas\.config: has the option awsRoleArnn, which the sidecar does not support/.test(line)),
      result.stderr
    )
    assert.ok(lines.some(line => /target\.properties: bootstrap\.servers "127\.0\.0\.1:2": the host name names no AWS region/.test(line)), result.stderr)
    assert.doesNotMatch(result.stderr, /ECONNREFUSED|connect/i)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('mm2.properties: AWS_MSK_IAM under a cluster alias (B.sasl.*), the other cluster untouched', () => {
  const file = writeProperties({
    clusters: 'A, B',
    'A.bootstrap.servers': '127.0.0.1:1',
    'B.bootstrap.servers': MSK_HOST,
    'A->B.enabled': 'true',
    'B.security.protocol': 'SASL_SSL',
    'B.sasl.mechanism': 'AWS_MSK_IAM',
    'B.sasl.jaas.config': `${MODULE} required awsProfileName="msk";`,
    'B.sasl.client.callback.handler.class': HANDLER,
  }, 'mm2.properties')
  const flow = configFromMm2(file, { settings: sidecarSettingsFromFlags({}, new ProblemList()) }).flows[0]
  assert.equal(flow?.source.sasl, undefined)
  assert.deepEqual(
    [
      flow?.target.sasl?.mechanism,
      (flow?.target.sasl as AwsMskIamSettings | undefined)?.profileName,
      (flow?.target.sasl as AwsMskIamSettings | undefined)?.jaasKey,
    ],
    ['aws_msk_iam', 'msk', 'B.sasl.jaas.config']
  )
})
