import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import type { NodeCluster } from '../../scripts/local-kafka/clusters.js'
import { committedOffsets, createTopicsWithLeaders, endOffsets, totalRecords, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { spawnSidecar, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'
import { compareCopies, describeComparison, type CopyComparison } from './copy-comparison.js'
import { wholeFaultClusters } from './fault-clusters.js'
import { readKeys } from './kcat-reader.js'
import { startTrafficWriter, type TrafficWriter } from './traffic-writer.js'

/** How the sidecar delivers: at-least-once (the default) or `--exactly.once true`. */
export type Delivery = 'at-least-once' | 'exactly-once'

/** What a fault gets to act on while the writer writes and the sidecar copies. */
export interface FaultContext {
  readonly source: NodeCluster
  readonly target: NodeCluster
  readonly topic: string
  readonly sidecar: SidecarProcess
  readonly writer: TrafficWriter
  /** A line for the test's diagnostics, stamped with the seconds since the fault began. */
  readonly note: (line: string) => void
  /** Resolves once the target holds `records` more than when called (or the sidecar exited). */
  readonly copiedMore: (records: number, timeoutMs?: number) => Promise<void>
}

export interface FaultScenario {
  readonly name: string
  readonly delivery: Delivery
  /** Partitions of the source topic; default 12. */
  readonly partitions?: number
  /** Configs of the target topic, created before the sidecar starts when given (otherwise the sidecar creates it). */
  readonly targetTopicConfigs?: Readonly<Record<string, string>>
  /** The replicas (node ids, preferred leader first) of each partition of the target topic created with `targetTopicConfigs`; default the cluster's choice. */
  readonly targetTopicReplicas?: (partition: number) => number[]
  /** More sidecar arguments (e.g. `--pass.through off`). */
  readonly sidecarArgs?: readonly string[]
  /** How long the writer goes on after the fault, in ms; default 3000. */
  readonly trafficAfterMs?: number
  /** How long the copy may take to catch up after the writer stopped, in ms; default 120000. */
  readonly catchUpTimeoutMs?: number
  readonly fault: (context: FaultContext) => Promise<void>
}

/** Sidecar logs of the suite, kept for diagnosis. */
const LOG_DIR = mkdtempSync(join(tmpdir(), 'fault-logs-'))

async function caughtUp (
  source: NodeCluster,
  group: string,
  topic: string,
  sidecar: SidecarProcess,
  timeoutMs: number
): Promise<{ ok: boolean, lagging: string }> {
  let lagging = ''
  const ok = await waitUntil(
    async () => {
      if (sidecar.child.exitCode !== null) return true
      const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, group, topic)])
      const behind = [...ends].filter(([p, end]) => committed.get(p) !== end)
      lagging = behind
        .slice(0, 24)
        .map(([p, end]) => `${p}: committed ${committed.get(p) ?? 'none'} of ${end}`)
        .join(', ')
      return behind.length === 0
    },
    { timeoutMs, intervalMs: 500, message: 'the copy to catch up' }
  ).then(
    () => sidecar.child.exitCode === null,
    () => false
  )
  return { ok, lagging }
}

/**
 * Compares the copy with the source (kcat, read_committed); while records are missing, reads
 * again for up to 20 s, since a transaction's commit markers reach the partitions a moment after
 * the coordinator decided.
 */
async function settledComparison (source: NodeCluster, target: NodeCluster, topic: string): Promise<{ comparison: CopyComparison, sourceKeys: Set<string> }> {
  const sourceRecords = await readKeys(source, topic)
  const compare = async (): Promise<CopyComparison> => compareCopies(sourceRecords, await readKeys(target, topic))
  let result = await compare()
  if (result.missing > 0) {
    // Reading again until nothing is missing; a timeout leaves the last comparison, which the test reports.
    await waitUntil(
      async () => {
        result = await compare()
        return result.missing === 0
      },
      { timeoutMs: 20_000, intervalMs: 2_000, message: 'missing records to show' }
    ).catch(() => {
      /* the last comparison stays in result, which the test reports */
    })
  }
  return { comparison: result, sourceKeys: new Set(sourceRecords.map(r => r.key)) }
}

/**
 * Keys the writer had acknowledged (`w0` .. `w<written-1>`) that the source does not hold. Reported,
 * not asserted: the copy is audited against what the source holds, and a source leader killed or
 * restarted under the writer's kafkajs producer leaves some acknowledged records off the source
 * (a few dozen per fault on this suite; kafkajs issue 1303 reports the same).
 */
function acknowledgedNotOnSource (writer: TrafficWriter, sourceKeys: ReadonlySet<string>): string[] {
  const lost: string[] = []
  for (let i = 0; i < writer.written(); i++) if (!sourceKeys.has(`w${i}`)) lost.push(`w${i}`)
  return lost
}

/**
 * Runs one fault under live traffic: a writer producing unique keys to a new RF-3 topic on the
 * source, the real sidecar copying it (`delivery`), the fault, more traffic, then the audit:
 * every source record once on the target (kcat, read_committed), in the source's order per
 * partition, and `mirror-check verify` passing. The test fails with what went wrong: missing and
 * duplicate counts per partition, the first offending keys, the partitions not caught up, the
 * verify summary and the sidecar's log; acknowledged records the source lacks are reported too.
 */
export async function runFaultScenario (t: TestContext, scenario: FaultScenario): Promise<void> {
  const { source, target } = await wholeFaultClusters()
  const topic = uniqueName(`fault-${scenario.name}`)
  const partitions = scenario.partitions ?? 12
  await source.withAdmin(admin => createTopicsWithLeaders(admin, [{ topic, numPartitions: partitions, replicationFactor: 3 }]))
  if (scenario.targetTopicConfigs !== undefined) {
    const configEntries = Object.entries(scenario.targetTopicConfigs).map(([name, value]) => ({ name, value }))
    const replicas = scenario.targetTopicReplicas
    const layout = replicas === undefined
      ? { numPartitions: partitions, replicationFactor: 3 }
      : { replicaAssignment: Array.from({ length: partitions }, (_, partition) => ({ partition, replicas: replicas(partition) })) }
    await target.withAdmin(admin => createTopicsWithLeaders(admin, [{ topic, ...layout, configEntries }]))
  }
  t.after(async () => {
    for (const cluster of [source, target]) {
      // Clean-up only: a cluster left broken by a failed fault must not hide the test's own failure.
      await cluster.withAdmin(async admin => { if ((await admin.listTopics()).includes(topic)) await admin.deleteTopics({ topics: [topic] }) })
        .catch(() => { /* clean-up only */ })
    }
  })
  const group = uniqueName(`fault-${scenario.name}`)
  const writer = startTrafficWriter(source, topic)
  t.after(() => writer.stop())
  const sidecar = spawnSidecar(t, {
    source,
    target,
    groupId: group,
    include: topic,
    consumer: { 'session.timeout.ms': 10_000, 'heartbeat.interval.ms': 1_000 },
    args: ['--offset.commit.interval.ms', '300', ...(scenario.delivery === 'exactly-once' ? ['--exactly.once', 'true'] : []), ...(scenario.sidecarArgs ?? [])],
  })
  const logFile = join(LOG_DIR, `${scenario.name}-${scenario.delivery}-${topic}.log`)
  void sidecar.exited.then(() => writeFileSync(logFile, sidecar.stderr()))
  await waitMirroring(sidecar)
  const copiedMore = async (records: number, timeoutMs = 90_000): Promise<void> => {
    const before = await totalRecords(target, topic).catch(() => 0n)
    await waitUntil(async () => sidecar.child.exitCode !== null || (await totalRecords(target, topic)) >= before + BigInt(records), {
      timeoutMs,
      message: `${records} more records on the target`,
    })
  }
  await copiedMore(1_000)

  const notes: string[] = []
  const faultStarted = Date.now()
  const note = (line: string): void => { notes.push(`+${((Date.now() - faultStarted) / 1000).toFixed(1)} s ${line}`) }
  await scenario.fault({ source, target, topic, sidecar, writer, note, copiedMore })
  note('fault done')
  const trafficAfterMs = scenario.trafficAfterMs ?? 3_000
  await waitUntil(() => sidecar.child.exitCode !== null, { timeoutMs: trafficAfterMs, intervalMs: 250, message: 'traffic after the fault' }).catch(() => {
    // The timeout is the point: the writer wrote for trafficAfterMs while the sidecar kept running.
  })
  await writer.stop()
  note(`writer stopped: ${writer.written()} records acknowledged, ${writer.failedSends()} sends repeated${writer.lastError() === undefined ? '' : ` (last error: ${writer.lastError()})`}`)

  const catchUp = await caughtUp(source, group, topic, sidecar, scenario.catchUpTimeoutMs ?? 120_000)
  note(catchUp.ok ? 'copy caught up' : `copy NOT caught up: ${catchUp.lagging}`)
  const { comparison, sourceKeys } = await settledComparison(source, target, topic)
  let lostBySource = acknowledgedNotOnSource(writer, sourceKeys)
  if (lostBySource.length > 0) {
    // Read once more, so a reader that stopped short is told apart from records the source lost.
    const firstRead = lostBySource.length
    lostBySource = acknowledgedNotOnSource(writer, new Set((await readKeys(source, topic)).map(r => r.key)))
    note(`source read twice: ${firstRead}, then ${lostBySource.length} acknowledged records not found`)
  }
  const verify = await runMirrorCheck(
    ['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--group', group, '--format', 'json'],
    { timeoutMs: 120_000 }
  )
  const verifySummary = verifyLine(verify.code, verify.stdout, verify.stderr)
  const exitedEarly = sidecar.child.exitCode
  if (exitedEarly === null) sidecar.child.kill('SIGTERM')
  const exitCode = await sidecar.exited

  const report = [
    `${scenario.name} (${scenario.delivery}), topic ${topic}, ${partitions} partitions at the start:`,
    ...notes.map(line => `  ${line}`),
    `source: ${lostBySource.length} records acknowledged to the writer are not on the source${lostBySource.length === 0 ? '' : ` (first ${lostBySource.slice(0, 8).join(' ')})`}`,
    describeComparison(comparison),
    `mirror-check verify: ${verifySummary}`,
    `sidecar exit: ${exitedEarly === null ? `${String(exitCode)} on SIGTERM` : `${String(exitedEarly)} on its own`}; log ${logFile}`,
  ].join('\n')
  // One diagnostic per line: the runner escapes the line breaks of a multi-line one.
  for (const line of report.split('\n')) t.diagnostic(line)
  const failed =
    !catchUp.ok || comparison.missing > 0 || comparison.duplicates > 0 || comparison.outOfOrderPartitions > 0 || verify.code !== 0 || exitedEarly !== null
  if (failed) {
    t.diagnostic('last lines of the sidecar\'s log:')
    for (const line of sidecar.stderr().trimEnd().split('\n').slice(-15)) t.diagnostic(line)
  }
  assert.deepEqual(
    {
      caughtUp: catchUp.ok,
      missing: comparison.missing,
      duplicates: comparison.duplicates,
      outOfOrderPartitions: comparison.outOfOrderPartitions,
      verifyExit: verify.code,
      sidecarExitedEarly: exitedEarly !== null,
    },
    { caughtUp: true, missing: 0, duplicates: 0, outOfOrderPartitions: 0, verifyExit: 0, sidecarExitedEarly: false },
    report
  )
}

/** `mirror-check verify --format json`'s totals in one line (or its exit and stderr when it printed no JSON). */
function verifyLine (code: number, stdout: string, stderr: string): string {
  try {
    const json = JSON.parse(stdout) as { passed: boolean, total: Record<string, unknown> }
    const total = Object.entries(json.total).filter(([, v]) => typeof v === 'number').map(([k, v]) => `${k} ${String(v)}`).join(', ')
    return `exit ${code}, ${json.passed ? 'passed' : 'FAILED'} (${total})`
  } catch {
    return `exit ${code}: ${stderr.trim().split('\n').slice(-3).join(' / ')}`
  }
}
