import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const PATCH = fileURLToPath(new URL('../../../../patches/kafkajs+2.2.4.patch', import.meta.url))
const MARKER = 'kafka-mirror-sidecar patch:'

/** Each hunk of the patch as `file @@ range`, with the lines it adds. */
function hunks (patch: string): Array<{ where: string, added: string[] }> {
  const result: Array<{ where: string, added: string[] }> = []
  let file = ''
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) file = line.split(' ')[2] ?? ''
    else if (line.startsWith('@@')) result.push({ where: `${file} ${line.split('@@')[1]?.trim() ?? ''}`, added: [] })
    else if (line.startsWith('+') && !line.startsWith('+++')) result.at(-1)?.added.push(line)
  }
  return result
}

test(`every hunk of the kafkajs patch says why in a comment starting "${MARKER}"`, () => {
  const all = hunks(readFileSync(PATCH, 'utf8'))
  assert.ok(all.length > 50, `expected the patch's hunks, read ${all.length}`)
  const unexplained = all.filter(hunk => !hunk.added.some(line => line.includes(MARKER))).map(hunk => hunk.where)
  assert.deepEqual(unexplained, [])
})

test('the hunk reader finds a hunk without the comment', () => {
  const patch = 'diff --git a/x.js b/x.js\n--- a/x.js\n+++ b/x.js\n@@ -1,2 +1,2 @@\n-const a = 1\n+const a = 2\n'
  assert.deepEqual(hunks(patch), [{ where: 'a/x.js -1,2 +1,2', added: ['+const a = 2'] }])
})
