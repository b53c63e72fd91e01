import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parse } from 'yaml'
import { configFromMm1 } from '../../../../src/config/mm1-args.js'
import type { PreflightReport } from '../../../../src/sidecar/preflight/preflight.js'
import { aclCommand, renderPreflightStrimzi, renderPreflightTable } from '../../../../src/sidecar/preflight/preflight-report.js'
import { requiredRights, type RequiredRight } from '../../../../src/sidecar/preflight/required-rights.js'
import { writeProperties } from '../../../helpers/sidecar.js'

const mm1 = (extra: Record<string, string> = {}) => configFromMm1({
  'consumer.config': [writeProperties({ 'bootstrap.servers': '127.0.0.1:1', 'group.id': 'mirror' })],
  'producer.config': writeProperties({ 'bootstrap.servers': '127.0.0.1:2' }),
  whitelist: 'orders.*',
  ...extra,
}).flows[0]!

const lines = (rights: readonly RequiredRight[]): string[] =>
  rights.map(r => `${r.operation} ${r.resource.type} ${r.resource.name}${r.resource.pattern === 'prefixed' ? '*' : ''}`).sort()

test('the rights of a run: the copied topics, the group, the offset syncs topic to create, nothing of an internal or unmatched topic', () => {
  const rights = requiredRights(mm1({ 'sync.topic.acls.enabled': 'false' }), {
    source: ['orders', 'payments', '__consumer_offsets'],
    target: ['orders'],
  })
  assert.deepEqual(lines(rights.source.rights), ['Describe topic orders', 'DescribeConfigs topic orders', 'Read group mirror', 'Read topic orders'])
  assert.deepEqual(lines(rights.target.rights), [
    'Alter topic orders',
    'AlterConfigs topic orders',
    'Create topic mirror-offset-syncs.source.internal',
    'Describe topic mirror-offset-syncs.source.internal',
    'Describe topic orders',
    'DescribeConfigs topic orders',
    'Read topic mirror-offset-syncs.source.internal',
    'Write topic mirror-offset-syncs.source.internal',
    'Write topic orders',
  ])
  assert.deepEqual(rights.target.toCreate, ['mirror-offset-syncs.source.internal'])
})

test('exactly-once adds the positions topic and Write on the lanes\' transactional ids by prefix; ACL sync adds the cluster rights', () => {
  const rights = requiredRights(mm1({ 'exactly.once': 'true' }), { source: ['orders'], target: ['orders', 'mirror-offset-syncs.source.internal'] })
  const target = lines(rights.target.rights)
  assert.ok(target.includes('Write transactional-id mirror.lane-*'), target.join('\n'))
  assert.ok(target.includes('Create topic mirror-positions.source.internal'), target.join('\n'))
  assert.ok(target.includes('Alter cluster kafka-cluster'), target.join('\n'))
  assert.ok(lines(rights.source.rights).includes('Describe cluster kafka-cluster'))
})

test('kafka-acls lines: literal and prefixed resources, the cluster, a wildcard name quoted for the shell', () => {
  const brokers = ['b1:9092', 'b2:9092']
  assert.equal(
    aclCommand(brokers, 'User:mirror', { resource: { type: 'transactional-id', name: 'mirror.lane-', pattern: 'prefixed' }, operation: 'Write', feature: 'x' }),
    'kafka-acls --bootstrap-server b1:9092,b2:9092 --add --allow-principal User:mirror --operation Write --transactional-id mirror.lane- --resource-pattern-type prefixed'
  )
  assert.equal(
    aclCommand(brokers, 'User:mirror', { resource: { type: 'group', name: '*', pattern: 'literal' }, operation: 'Describe', feature: 'x' }),
    "kafka-acls --bootstrap-server b1:9092,b2:9092 --add --allow-principal User:mirror --operation Describe --group '*'"
  )
  assert.equal(
    aclCommand(brokers, 'User:CN=mirror,O=a b', { resource: { type: 'cluster', name: 'kafka-cluster', pattern: 'literal' }, operation: 'Alter', feature: '' }),
    "kafka-acls --bootstrap-server b1:9092,b2:9092 --add --allow-principal 'User:CN=mirror,O=a b' --operation Alter --cluster"
  )
})

test('the Strimzi KafkaUser holds every right needed, grouped by resource; the table says nothing missing when nothing is', () => {
  const rights: RequiredRight[] = [
    { resource: { type: 'topic', name: 'orders', pattern: 'literal' }, operation: 'Read', feature: 'copy' },
    { resource: { type: 'topic', name: 'orders', pattern: 'literal' }, operation: 'Describe', feature: 'copy' },
    { resource: { type: 'cluster', name: 'kafka-cluster', pattern: 'literal' }, operation: 'Describe', feature: 'topic ACL sync' },
  ]
  const cluster = { alias: 'A', brokers: ['a:9092'], principal: 'User:mirror', rights, missing: [], missingApis: [], toCreate: [] }
  const clusters = [{ ...cluster, role: 'source' }, { ...cluster, role: 'target', alias: 'B', rights: [] }] as const
  const report: PreflightReport = { flows: [{ flow: 'A->B', clusters, settings: [] }] }
  const [source] = renderPreflightStrimzi(report).split('---\n').map(doc => parse(doc) as { metadata: unknown, spec: { authorization: { acls: unknown } } })
  assert.deepEqual(source!.metadata, { name: 'mirror', labels: { 'strimzi.io/cluster': 'A' } })
  assert.deepEqual(source!.spec.authorization.acls, [
    { resource: { type: 'topic', name: 'orders', patternType: 'literal' }, operations: ['Read', 'Describe'], host: '*' },
    { resource: { type: 'cluster' }, operations: ['Describe'], host: '*' },
  ])
  assert.match(renderPreflightTable(report), /preflight: nothing missing$/)
})
