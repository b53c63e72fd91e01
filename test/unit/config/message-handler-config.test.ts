import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { hasMessageHandler } from '../../../src/config/message-handler-config.js'
import { loadMessageHandler, loadMessageHandlers } from '../../../src/config/message-handler-loader.js'
import { configFromMm1, mergeEnv } from '../../../src/config/mm1-args.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { ConfigError } from '../../../src/shared/errors.js'
import type { HandlerRecord } from '../../../src/shared/message-handler-api.js'

function tempDir (t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'mirror-handler-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function write (dir: string, name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

function mm1 (dir: string, extra: Record<string, string>): ReturnType<typeof configFromMm1> {
  const consumer = write(dir, 'source.properties', 'bootstrap.servers=127.0.0.1:1\n')
  const producer = write(dir, 'target.properties', 'bootstrap.servers=127.0.0.1:2\n')
  return configFromMm1({ 'consumer.config': [consumer], 'producer.config': producer, whitelist: '.*', ...extra })
}

function problemsOf (build: () => unknown): string[] {
  try {
    build()
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error))
    return error.problems.map(p => `${p.key} ${p.value ?? ''}: ${p.message}`)
  }
  assert.fail('expected a ConfigError')
}

const record: HandlerRecord = { topic: 't', partition: 0, offset: '1', timestamp: '0', key: null, value: Buffer.from('v'), headers: [] }

test('--message.handler and --message.handler.args (or MIRROR_MESSAGE_HANDLER*) give each flow its module; none by default', t => {
  const dir = tempDir(t)
  const module = write(dir, 'handler.mjs', 'export function handle (r) { return r }\n')
  const config = mm1(dir, { 'message.handler': module, 'message.handler.args': 'a=1' })
  assert.deepEqual(config.flows[0]?.messageHandler, { module, path: module, args: 'a=1', key: '--message.handler' })
  assert.equal(hasMessageHandler(config.flows[0] as never), true)
  assert.equal(hasMessageHandler(mm1(dir, {}).flows[0] as never), false)
  const fromEnv = mergeEnv({}, { MIRROR_MESSAGE_HANDLER: module, MIRROR_MESSAGE_HANDLER_ARGS: 'b' })
  assert.deepEqual([fromEnv['message.handler'], fromEnv['message.handler.args']], [module, 'b'])
})

test('a missing module, a folder, a Java class name and args without a module are problems naming the flag', t => {
  const dir = tempDir(t)
  mkdirSync(join(dir, 'handlers'))
  assert.deepEqual(
    problemsOf(() => mm1(dir, { 'message.handler': join(dir, 'nope.js') })),
    [
      `--message.handler ${join(dir, 'nope.js')}: file not found; give the path of a JavaScript module (.js, .mjs or .cjs) that exports handle(record), see docs/message-handler.md`,
    ]
  )
  assert.match(problemsOf(() => mm1(dir, { 'message.handler': join(dir, 'handlers') }))[0] ?? '', /handlers: is not a file/)
  assert.match(
    problemsOf(() => mm1(dir, { 'message.handler': 'kafka.tools.MirrorMaker.defaultMirrorMakerMessageHandler' }))[0] ?? '',
    /looks like a Java class \(MirrorMaker 1's handlers\): Java cannot run here/
  )
  assert.deepEqual(
    problemsOf(() => mm1(dir, { 'message.handler.args': 'x' })),
    ['--message.handler.args x: has no effect without --message.handler; give the handler module too, or remove it']
  )
})

test('mm2.properties: message.handler at top level, overridden per flow by A->B.message.handler', t => {
  const dir = tempDir(t)
  const a = write(dir, 'a.mjs', 'export default r => r\n')
  const b = write(dir, 'b.cjs', 'module.exports = r => r\n')
  const mm2 = write(dir, 'mm2.properties', [
    'clusters = A, B, C', 'A.bootstrap.servers = 127.0.0.1:1', 'B.bootstrap.servers = 127.0.0.1:2', 'C.bootstrap.servers = 127.0.0.1:3',
    'A->B.enabled = true', 'A->C.enabled = true', `message.handler = ${a}`, `A->C.message.handler = ${b}`, 'A->C.message.handler.args = only-c', '',
  ].join('\n'))
  const config = configFromMm2(mm2, { settings: { metricsPort: 0, metricsHost: '127.0.0.1', logLevel: 'info', drainTimeoutMs: 1000 } })
  assert.deepEqual(config.flows.map(f => [f.name, f.messageHandler?.path, f.messageHandler?.args, f.messageHandler?.key]), [
    ['A->B', a, undefined, 'message.handler'],
    ['A->C', b, 'only-c', 'A->C.message.handler'],
  ])
  assert.deepEqual(config.ignoredKeys, [])
})

test('ES modules and CommonJS: a named handle, a default function, or module.exports = { handle }', async t => {
  const dir = tempDir(t)
  const forms = {
    'named.mjs': 'export function handle (r) { return { ...r, value: "named" } }\n',
    'default.mjs': 'export default async function (r, c) { return { value: c.args } }\n',
    'function.cjs': 'module.exports = function (r) { return [r, r] }\n',
    'object.cjs': 'module.exports = { handle (r) { return null } }\n',
    'exports.cjs': 'exports.handle = r => ({ value: "exports" })\n',
  }
  const results: unknown[] = []
  for (const [name, text] of Object.entries(forms)) {
    const path = write(dir, name, text)
    const loaded = await loadMessageHandler({ module: name, path, args: 'ctx', key: '--message.handler' })
    assert.ok('handle' in loaded, `${name}: ${JSON.stringify(loaded)}`)
    const out = await loaded.handle({ ...record }, { args: 'ctx', flow: 'f' }) as unknown
    results.push(Array.isArray(out) ? out.length : out === null ? null : (out as { value: unknown }).value)
  }
  assert.deepEqual(results, ['named', 'ctx', 2, null, 'exports'])
})

test('a module without a handler function, with a syntax error, or that throws while loading: one problem each, all together', async t => {
  const dir = tempDir(t)
  const config = (name: string, text: string) => {
    const path = write(dir, name, text)
    return { name: `f-${name}`, messageHandler: { module: `./${name}`, path, args: undefined, key: '--message.handler' } }
  }
  const flows = [
    config('none.mjs', 'export const transform = 1\nexport default { name: "x" }\n'),
    config('syntax.mjs', 'export function handle (r) {\n  return r +\n}\n'),
    config('throws.mjs', 'throw new Error("missing env HANDLER_TOKEN")\n'),
    config('fine.mjs', 'export const handle = r => r\n'),
  ]
  await assert.rejects(loadMessageHandlers({ flows } as never), (error: unknown) => {
    assert.ok(error instanceof ConfigError)
    assert.deepEqual(error.problems.map(p => `${p.key} ${p.value}: ${p.message}`), [
      '--message.handler ./none.mjs: exports no handler function (it exports default, transform, default.name); export function handle (record, context) { ... } or make the function the default export (module.exports = function ...)',
      '--message.handler ./syntax.mjs: cannot be loaded: SyntaxError: Unexpected token \'}\' (syntax.mjs line 3); fix the module',
      '--message.handler ./throws.mjs: cannot be loaded: Error: missing env HANDLER_TOKEN; fix the module',
    ])
    return true
  })
  const loaded = await loadMessageHandlers({ flows: [flows[3]] } as never)
  assert.deepEqual([...loaded.keys()], ['f-fine.mjs'])
})

test('mm2.properties: a missing top-level module is one problem however many flows read it; the one-file form takes message.handler as a key', t => {
  const dir = tempDir(t)
  const missing = join(dir, 'gone.mjs')
  const mm2 = write(dir, 'mm2.properties', [
    'clusters = A, B, C', 'A.bootstrap.servers = 127.0.0.1:1', 'B.bootstrap.servers = 127.0.0.1:2', 'C.bootstrap.servers = 127.0.0.1:3',
    'A->B.enabled = true', 'A->C.enabled = true', `message.handler = ${missing}`, '',
  ].join('\n'))
  const settings = { metricsPort: 0, metricsHost: '127.0.0.1', logLevel: 'info' as const, drainTimeoutMs: 1000 }
  assert.deepEqual(
    problemsOf(() => configFromMm2(mm2, { settings })),
    [
      `message.handler ${missing}: file not found; give the path of a JavaScript module (.js, .mjs or .cjs) that exports handle(record), see docs/message-handler.md`,
    ]
  )

  const module = write(dir, 'h.cjs', 'module.exports = r => r\n')
  const oneFile = write(
    dir,
    'mirror.properties',
    `bootstrap.servers=127.0.0.1:1\ntarget.bootstrap.servers=127.0.0.1:2\nwhitelist=.*\nmessage.handler=${module}\nmessage.handler.args=x\n`
  )
  const config = configFromMm2(oneFile, { settings })
  assert.deepEqual(config.flows[0]?.messageHandler, { module, path: module, args: 'x', key: `${oneFile}: message.handler` })
})

test('a handler flow never forwards batches: pass.through=on (or shallowiterator.enable=true) with a handler is a problem, auto is fine', t => {
  const dir = tempDir(t)
  const module = write(dir, 'h.mjs', 'export const handle = r => r\n')
  assert.equal(mm1(dir, { 'message.handler': module }).flows[0]?.passThrough, 'auto')
  assert.deepEqual(
    problemsOf(() => mm1(dir, { 'message.handler': module, 'pass.through': 'on' })),
    [
      `--pass.through on: contradicts --message.handler "${module}": a message handler reads every record, so no batch can be forwarded undecoded; use auto (the default) or off, or drop the handler`,
    ]
  )
  const consumer = write(dir, 'shallow.properties', 'bootstrap.servers=127.0.0.1:1\nshallowiterator.enable=true\n')
  const producer = write(dir, 'target.properties', 'bootstrap.servers=127.0.0.1:2\n')
  assert.match(
    problemsOf(() => configFromMm1({ 'consumer.config': [consumer], 'producer.config': producer, whitelist: '.*', 'message.handler': module }))[0] ?? '',
    /shallow\.properties: shallowiterator\.enable true: contradicts --message\.handler/
  )
  const mm2 = write(
    dir,
    'mm2.properties',
    [
      'clusters = A, B',
      'A.bootstrap.servers = 127.0.0.1:1',
      'B.bootstrap.servers = 127.0.0.1:2',
      'A->B.enabled = true',
      `message.handler = ${module}`,
      'A->B.pass.through = on',
      '',
    ].join('\n')
  )
  assert.match(
    problemsOf(() => configFromMm2(mm2, { settings: { metricsPort: 0, metricsHost: '127.0.0.1', logLevel: 'info', drainTimeoutMs: 1000 } }))[0] ?? '',
    /^A->B\.pass\.through on: contradicts message\.handler/
  )
})
