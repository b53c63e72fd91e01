import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { createTopic, deleteTopicIfExists, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)

/** kcat (librdkafka, an independent client) writes one record per header set; `-H name` alone is a null value. */
async function kcatProduce (bootstrap: string, topic: string, headerSets: ReadonlyArray<readonly string[]>): Promise<void> {
  for (const [i, headers] of headerSets.entries()) {
    const child = spawn('kcat', ['-P', '-b', bootstrap, '-t', topic, '-p', '0', '-K', ':', ...headers.flatMap(h => ['-H', h])], {
      stdio: ['pipe', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', chunk => { stderr += String(chunk) })
    child.stdin.end(`k${i}:v${i}\n`)
    const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
    assert.equal(code, 0, `kcat -P failed: ${stderr}`)
  }
}

async function kcatHeaders (bootstrap: string, topic: string): Promise<string[]> {
  const { stdout } = await execFileAsync('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%k %h\n'])
  return stdout.split('\n').filter(line => line !== '')
}

const HEADER_SETS = [
  ['a=1', 'b=2', 'a=3'],
  ['n', 'a=x', 'n', 'e='],
  ['traceparent', 'z=last', 'z=', 'a=first'],
]

test(
  'headers keep their wire order through the mirror: repeated names interleaved, null and empty values (kcat on both sides); verify tells a regrouping apart',
  { timeout: 120_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: 1 })
    t.after(() => deleteTopicIfExists(target, topic))
    await kcatProduce(source.bootstrap, topic, HEADER_SETS)
    const written = await kcatHeaders(source.bootstrap, topic)
    assert.deepEqual(written, ['k0 a=1,b=2,a=3', 'k1 n=NULL,a=x,n=NULL,e=', 'k2 traceparent=NULL,z=last,z=,a=first'], 'what kcat wrote')

    const group = uniqueName('hdr-order')
    const sidecar = spawnSidecar(t, { source, target, groupId: group, include: topic })
    await waitMirroring(sidecar)
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === 3n, { timeoutMs: 30_000, message: 'the three records on the target' })
    assert.deepEqual(await kcatHeaders(target.bootstrap, topic), written)
    const verified = await runMirrorCheck(['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--format', 'json'])
    assert.equal(verified.code, 0, verified.stdout + verified.stderr)

    // The same records with the repeated name regrouped (what the mirror wrote before it kept the order).
    const planted = await createTopic(t, source, { partitions: 1 })
    await createTopic(t, target, { name: planted, partitions: 1 })
    await kcatProduce(source.bootstrap, planted, [['a=1', 'b=2', 'a=3']])
    await kcatProduce(target.bootstrap, planted, [['a=1', 'a=3', 'b=2']])
    const regrouped = await runMirrorCheck(['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', planted, '--format', 'json'])
    assert.equal(regrouped.code, 1, regrouped.stdout + regrouped.stderr)
    assert.match(regrouped.stdout, /headers/)
  }
)
