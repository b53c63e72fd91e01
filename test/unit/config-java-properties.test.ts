import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseProperties } from '../../src/config/java-properties.js'

test('parses java.util.Properties syntax: separators, comments, continuations and escapes', () => {
  const text = [
    '# comment', '! also a comment', '',
    'bootstrap.servers=a:9092,\\', '    b:9092',
    'group.id : mirror', 'client.id mirror-1', '  spaced.key   =   value with spaces  ',
    'unicode=caf\\u00e9', 'escaped\\=key=v', 'tabs=a\\tb', 'empty=', 'trailing=x\\\\',
  ].join('\n')
  const props = parseProperties(text, 'f.properties')
  const get = (k: string): string | undefined => props.get(k)?.value
  assert.equal(get('bootstrap.servers'), 'a:9092,b:9092')
  assert.equal(get('group.id'), 'mirror')
  assert.equal(get('client.id'), 'mirror-1')
  assert.equal(get('spaced.key'), 'value with spaces  ')
  assert.equal(get('unicode'), 'café')
  assert.equal(get('escaped=key'), 'v')
  assert.equal(get('tabs'), 'a\tb')
  assert.equal(get('empty'), '')
  assert.equal(get('trailing'), 'x\\')
  assert.equal(props.get('group.id')?.line, 6)
  assert.equal(props.size, 9)
})
