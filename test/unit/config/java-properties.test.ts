import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseProperties } from '../../../src/config/java-properties.js'
import { ConfigError } from '../../../src/shared/errors.js'

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

test('a \\u escape without four hex digits is refused as Java refuses it, naming file, line and key; a secret value stays hidden', () => {
  const text = 'ok=caf\\u00e9\nclient.id=a\\u00zz\nssl.key.password=p\\u12\nliteral=\\\\u00zz\nbad\\u0g=1\n'
  assert.throws(() => parseProperties(text, 'c.properties'), (error: unknown) => {
    assert.ok(error instanceof ConfigError)
    assert.deepEqual(error.problems.map(p => `${p.key} ${p.value ?? ''}`), [
      'c.properties:2: client.id \\u00zz',
      'c.properties:3: ssl.key.password [redacted]',
      'c.properties:5: bad\\u0g \\u0g',
    ])
    return true
  })
  assert.equal(parseProperties('literal=\\\\u00zz\n').get('literal')?.value, '\\u00zz')
})
