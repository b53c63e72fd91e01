import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Metrics } from '../../../src/sidecar/metrics/metric-names.js'

const migration = readFileSync(fileURLToPath(new URL('../../../../docs/migration.md', import.meta.url)), 'utf8')
const section = migration.slice(migration.indexOf('## MirrorMaker 2 metrics and ours'))

test(
  'the MirrorMaker 2 metric table of docs/migration.md names only metrics the sidecar exports (a histogram with its _bucket, _sum and _count series)',
  () => {
    assert.ok(section.startsWith('## MirrorMaker 2 metrics and ours'), 'docs/migration.md has the section')
    const exported = new Map<string, string>(Object.values(Metrics).map(m => [m.name, m.type]))
    const named = [...new Set(section.match(/kafka_mirror_[a-z_]+/g) ?? [])]
    assert.ok(named.length >= 8, named.join(', '))
    const unknown = named.filter(name => {
      if (exported.has(name)) return false
      const base = name.replace(/_(bucket|sum|count)$/, '')
      return exported.get(base) !== 'histogram'
    })
    assert.deepEqual(unknown, [], 'names in the table that metric-names.ts does not define')
  }
)

test('the table maps every metric of MirrorMaker 2\'s source and checkpoint connectors, with the name Strimzi\'s JMX-exporter rules give it', () => {
  const rows = section.split('\n').filter(line => line.startsWith('| `'))
  for (const attribute of [
    'record-count',
    'record-rate',
    'byte-count',
    'byte-rate',
    'record-age-ms',
    'record-age-ms-avg',
    'record-age-ms-max',
    'record-age-ms-min',
    'replication-latency-ms',
    'replication-latency-ms-avg',
    'replication-latency-ms-max',
    'replication-latency-ms-min',
    'checkpoint-latency-ms',
  ]) {
    const row = rows.find(line => line.split('|')[1]?.includes(`\`${attribute}\``))
    assert.ok(row !== undefined, `a row for ${attribute}`)
    assert.match(row, /kafka_connect_mirror_mirror(source|checkpoint)connector_|\.\.\._/, `${attribute}: Strimzi's name`)
    assert.match(row, /`kafka_mirror_[a-z_]+`/, `${attribute}: ours`)
  }
})
