import assert from 'node:assert/strict'
import { test } from 'node:test'
import { docsAsGenerated, generatedParts, keyTableMarkdown, withPart } from '../../../scripts/config-docs.js'
import { CONSUMER_TABLE } from '../../../src/config/client-keys.js'
import { FLOW_TABLE } from '../../../src/config/mm2-flow-keys.js'
import { SECURITY_TABLE } from '../../../src/config/security-keys.js'

test('the key tables of docs/configuration.md and docs/security.md are what scripts/config-docs.ts writes from src/config/', () => {
  for (const [file, [current, generated]] of docsAsGenerated()) {
    assert.equal(current, generated, `${file} differs from the key tables: run npm run build && node dist/scripts/config-docs.js`)
  }
})

test('every key of the flow, consumer and security tables has its row in the docs', () => {
  const docs = [...docsAsGenerated().values()].map(([current]) => current).join('\n')
  for (const row of [...FLOW_TABLE, ...CONSUMER_TABLE, ...SECURITY_TABLE]) assert.ok(docs.includes(`| \`${row.key}\` |`), row.key)
})

test('a generated part is rewritten whole between its markers, and missing markers are an error naming them', () => {
  const part = generatedParts().find(p => p.name === 'consumer keys')
  assert.ok(part !== undefined)
  const doc = docsAsGenerated().get(part.file)?.[0] ?? ''
  const edited = doc.replace('| `max.poll.records` | integer >= 1 | `2000` |', '| `max.poll.records` | integer >= 1 | `500` |')
  assert.notEqual(edited, doc)
  assert.equal(withPart(edited, part), doc)
  assert.ok(keyTableMarkdown(CONSUMER_TABLE).includes('| `max.poll.records` | integer >= 1 | `2000` |'))
  assert.throws(() => withPart('# no markers\n', part), /no markers of the key table "consumer keys"/)
})
