import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { KafkaEndpoint } from '../../scripts/local-kafka/clusters.js'
import { waitUntil } from './wait.js'

/** Path of the compiled sidecar entry point, next to this compiled helper. */
export const SIDECAR_BIN = fileURLToPath(new URL('../../src/bin/mirror-sidecar.js', import.meta.url))

/** Writes a Java .properties file into a fresh temp folder and returns its path. */
export function writeProperties (entries: Record<string, string | number>, name = 'client.properties'): string {
  const dir = mkdtempSync(join(tmpdir(), 'mirror-test-'))
  const path = join(dir, name)
  writeFileSync(path, Object.entries(entries).map(([k, v]) => `${k}=${v}`).join('\n') + '\n')
  return path
}

/** A sidecar child process with its output collected. */
export interface SidecarProcess {
  readonly child: ChildProcess
  readonly stderr: () => string
  readonly stdout: () => string
  /** Resolves with the exit code (or signal name) once the process ended. */
  readonly exited: Promise<number | string>
}

export interface SidecarRun {
  readonly source: KafkaEndpoint
  readonly target: KafkaEndpoint
  readonly groupId: string
  readonly include: string
  readonly args?: readonly string[]
  readonly consumer?: Record<string, string | number>
  readonly producer?: Record<string, string | number>
  readonly env?: NodeJS.ProcessEnv
}

/** Runs the real `mirror-sidecar` binary with MirrorMaker 1 flags; killed (SIGKILL) when the test ends. */
export function spawnSidecar (t: TestContext, run: SidecarRun, bin?: string): SidecarProcess {
  const consumerConfig = writeProperties(
    { 'bootstrap.servers': run.source.bootstrap, 'group.id': run.groupId, 'auto.offset.reset': 'earliest', ...run.consumer },
    'source.properties'
  )
  const producerConfig = writeProperties({ 'bootstrap.servers': run.target.bootstrap, acks: 'all', ...run.producer }, 'target.properties')
  const given = new Set((run.args ?? []).filter(arg => arg.startsWith('--')))
  const defaults = [['--offset.commit.interval.ms', '500'], ['--refresh.topics.interval.ms', '1000'], ['--metrics.port', '0'], ['--metrics.host', '127.0.0.1']]
    .filter(([flag]) => !given.has(flag as string)).flat() as string[]
  return spawnSidecarArgs(
    t,
    ['--consumer.config', consumerConfig, '--producer.config', producerConfig, '--whitelist', run.include, ...defaults, ...(run.args ?? [])],
    run.env,
    bin
  )
}

/** Runs `mirror-sidecar args...`: the compiled one of this checkout, or `bin` (an installed executable) when given. */
export function spawnSidecarArgs (t: TestContext, args: readonly string[], env: NodeJS.ProcessEnv = {}, bin?: string): SidecarProcess {
  const [command, commandArgs] = bin === undefined ? [process.execPath, [SIDECAR_BIN, ...args]] : [bin, [...args]]
  const child = spawn(command, commandArgs, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  let stdout = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  const exited = new Promise<number | string>(resolve => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  return { child, stderr: () => stderr, stdout: () => stdout, exited }
}

/** Waits until the sidecar logged that it is mirroring (connected, topics resolved, group joined). */
export async function waitMirroring (sidecar: SidecarProcess, timeoutMs = 60_000): Promise<void> {
  let exited = false
  await waitUntil(() => {
    exited = sidecar.child.exitCode !== null
    return exited || sidecar.stderr().includes('"msg":"mirroring"')
  }, { timeoutMs, message: 'the sidecar to start mirroring' })
  if (exited) throw new Error(`sidecar exited early (${sidecar.child.exitCode}):\n${sidecar.stderr()}`)
}
