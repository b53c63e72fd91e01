import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { compareCopies } from '../test/faults/copy-comparison.js'
import type { Compression, RestartPhase } from './bench-options.js'
import { stopChild, type TrackedChild } from './child-registry.js'
import { mirrorGroupId, type Contender, type MirrorJob } from './contenders.js'
import { duplicateCopies } from './duplicate-copies.js'
import { startRateProducer, type RecordShape } from './kcat-producer.js'
import { readOffsetKeys } from './keyed-read.js'
import { longestOpenStallMs, partitionStalls, stallWindows, windowOfTargetOffset, windowStalls, type WindowStalls } from './partition-stalls.js'
import { ProgressPoller } from './progress-poller.js'
import { metricSum, sidecarMetrics } from './sidecar-metrics.js'
import type { BenchRun } from './bench-run.js'

/** What the scenario does, the same for each delivery mode. */
export interface InstancesRestartSettings {
  /** Sidecar processes in the one consumer group. */
  readonly instances: number
  readonly partitions: number
  /** Keyed records per second written into the source throughout. */
  readonly ratePerSecond: number
  /** From one restart's signal to the next's (and from the steady copy to the first). */
  readonly restartIntervalMs: number
  /** Restarts per phase, instance 0, 1, 2, 0, ... */
  readonly restartsPerPhase: number
  /** The phases, in order. */
  readonly phases: readonly RestartPhase[]
  readonly pollIntervalMs: number
  /** A partition's stall counts when it lasts longer than this. */
  readonly stallThresholdSeconds: number
  /** Longest wait for the group to balance at the start, the copy to get steady, and the target to catch up at the end. */
  readonly timeoutMs: number
  readonly shape: RecordShape
  /** The sidecar contender's instances each get their own `group.instance.id` (KIP-345). */
  readonly staticMembership: boolean
}

/** The mirror settings every instance gets (the bench's flags). */
export interface InstancesMirrorSettings {
  readonly streams: number
  readonly compression: Compression
  readonly producerProps: Readonly<Record<string, string>>
  readonly consumerProps: Readonly<Record<string, string>>
  readonly commitIntervalMs: number | undefined
}

/** One restart of one instance. */
export interface InstanceRestart {
  readonly phase: RestartPhase
  readonly instance: number
  /** `SIGTERM 1`, `SIGKILL 2`: the window label of its stalls. */
  readonly label: string
  /** Signal sent, seconds after the copy was steady. */
  readonly atSeconds: number
  /** Signal to the process gone, seconds. */
  readonly exitSeconds: number
  /** Exit code (a SIGTERM stop should be 0), or the signal that ended it. */
  readonly exit: string
  /**
   * Signal to the running instances owning every partition again (their
   * `kafka_mirror_assigned_partitions` add up to all of them); undefined when that did not happen
   * before the next restart.
   */
  readonly rebalancedSeconds: number | undefined
  /** Partitions each instance owned then, by instance number. */
  readonly split: readonly number[] | undefined
}

export interface InstancesRestartFigures {
  readonly contender: string
  readonly label: string
  readonly exactlyOnce: boolean
  readonly topic: string
  readonly group: string
  /** Records the writer had acknowledged when it stopped. */
  readonly written: number
  readonly sourceRecords: number
  /** Read back with read_committed. */
  readonly targetRecords: number
  readonly missing: number
  readonly duplicates: number
  readonly outOfOrderPartitions: number
  /** Writer stopped to every partition's target end at its source end; undefined when it did not within the timeout. */
  readonly caughtUpSeconds: number | undefined
  /** Partitions each instance owned at the end of the steady window, just before the first restart, by instance number. */
  readonly startSplit: readonly number[]
  readonly restarts: readonly InstanceRestart[]
  /** The steady window, then one per restart: stalls, and the duplicates written on the target in it. */
  readonly windows: ReadonlyArray<WindowStalls & { readonly duplicates: number }>
  /** Duplicates written on the target in no window (before the copy was steady, or after the writer stopped). */
  readonly duplicatesOutsideWindows: number
  readonly polls: number
  /** Exit of every instance stopped with SIGTERM at the end. */
  readonly finalExits: readonly string[]
}

export interface InstancesRestartContext extends BenchRun {
  readonly settings: InstancesRestartSettings
  readonly mirror: InstancesMirrorSettings
  readonly log: (line: string) => void
}

interface RunningInstance {
  readonly child: TrackedChild
  readonly workDir: string
}

function describeExit (exit: { code: number | null, signal: NodeJS.Signals | null }): string {
  return exit.signal !== null ? exit.signal : `exit ${exit.code ?? '?'}`
}

async function assignedPartitions (instance: RunningInstance): Promise<number> {
  return metricSum(await sidecarMetrics(instance.workDir), 'kafka_mirror_assigned_partitions')
}

/**
 * Waits until the partitions the running instances own add up to `partitions`: every partition
 * owned by a running process. Not every instance need own some: with exactly-once the group
 * hands out `--num.producers` buckets, fewer than the members of 3 instances of 2 streams.
 * Resolves to the time and each instance's count, or undefined at `deadlineMs`.
 */
async function waitOwned (
  instances: readonly RunningInstance[],
  partitions: number,
  deadlineMs: number
): Promise<{ atMs: number, split: number[] } | undefined> {
  while (performance.now() < deadlineMs) {
    const split = await Promise.all(instances.map(assignedPartitions))
    if (split.reduce((a, b) => a + b, 0) === partitions) return { atMs: performance.now(), split }
    await sleep(200)
  }
  return undefined
}

/**
 * The instances-rolling-restart scenario for one contender (the sidecar at least once or exactly
 * once): `instances` processes in one group copy a topic written at a steady rate; once the copy
 * is steady and one restart interval has been watched without a restart, each instance in turn is
 * stopped with SIGTERM and started again, then killed with SIGKILL and started again at once,
 * one restart per interval. The end offsets of both clusters are polled throughout; after the
 * writer stops and the target caught up, both topics are read back and compared key by key.
 */
export async function runInstancesRestart (contender: Contender, context: InstancesRestartContext): Promise<InstancesRestartFigures> {
  const { settings, mirror, log } = context
  const tag = `${context.id}i${contender.name}`
  const topic = `bench-instances-${tag}`
  const job = (instance: number, start: number): MirrorJob => ({
    sourceBootstrap: context.source.bootstrap,
    targetBootstrap: context.target.bootstrap,
    topic,
    streams: mirror.streams,
    compression: mirror.compression,
    producerProps: mirror.producerProps,
    consumerProps: settings.staticMembership && contender.name === 'sidecar'
      ? { ...mirror.consumerProps, 'group.instance.id': `${tag}-instance${instance}` }
      : mirror.consumerProps,
    tag,
    workDir: join(context.workDir, `${tag}-instance${instance}-start${start}`),
    ...(mirror.commitIntervalMs === undefined ? {} : { commitIntervalMs: mirror.commitIntervalMs }),
  })
  await context.sourceAdmin.recreateTopic(topic, settings.partitions)
  await context.targetAdmin.recreateTopic(topic, settings.partitions)
  const starts = new Array<number>(settings.instances).fill(0)
  const startInstance = async (instance: number): Promise<RunningInstance> => {
    const instanceJob = job(instance, starts[instance]!++)
    return { child: await contender.start(instanceJob), workDir: instanceJob.workDir }
  }

  const poller = new ProgressPoller(context.source, context.target, topic, settings.partitions, settings.pollIntervalMs)
  await poller.start()
  const producer = startRateProducer(
    { bootstrap: context.source.bootstrap, topic, compression: mirror.compression, lingerMs: 5 },
    settings.shape,
    settings.ratePerSecond
  )
  let producerStopped = false
  const instances: RunningInstance[] = []
  const restarts: InstanceRestart[] = []
  const signals: Array<{ label: string, atMs: number }> = []
  const finalExits: string[] = []
  let startSplit: readonly number[] = []
  let written = 0
  let steadyAtMs = 0
  let writerStoppedMs = 0
  let caughtUpMs: number | undefined
  try {
    for (let i = 0; i < settings.instances; i++) instances.push(await startInstance(i))
    const startedMs = performance.now()
    const owned = await waitOwned(instances, settings.partitions, startedMs + settings.timeoutMs)
    if (owned === undefined) {
      throw new Error(`${contender.name}: the ${settings.instances} instances did not own the ${settings.partitions} partitions within ${settings.timeoutMs / 1000} s`)
    }
    log(`${contender.name}: the ${settings.instances} instances own the ${settings.partitions} partitions (${owned.split.join('/')}) after ${((owned.atMs - startedMs) / 1000).toFixed(1)} s`)
    while (longestOpenStallMs(poller.polls, settings.partitions) >= settings.stallThresholdSeconds * 1000 || poller.polls.length < 5) {
      if (performance.now() - startedMs > settings.timeoutMs) {
        throw new Error(`${contender.name}: the copy did not get steady within ${settings.timeoutMs / 1000} s`)
      }
      await sleep(settings.pollIntervalMs)
    }
    steadyAtMs = performance.now()
    log(`${contender.name}: copy steady; ${settings.restartIntervalMs / 1000} s without a restart`)
    await sleep(settings.restartIntervalMs)
    startSplit = await Promise.all(instances.map(assignedPartitions))
    for (const phase of settings.phases) {
      for (let r = 0; r < settings.restartsPerPhase; r++) {
        const instance = r % settings.instances
        const label = `${phase} ${r + 1}`
        const atMs = performance.now()
        signals.push({ label, atMs })
        const stopping = instances[instance]!
        stopping.child.child.kill(phase)
        const exited = await Promise.race([stopping.child.exited, sleep(60_000, undefined)])
        const exit = exited === undefined ? 'still running 60 s after SIGTERM: SIGKILL' : describeExit(exited)
        if (exited === undefined) await stopChild(stopping.child, 0)
        const exitMs = performance.now()
        instances[instance] = await startInstance(instance)
        const nextMs = atMs + settings.restartIntervalMs
        const owned = await waitOwned(instances, settings.partitions, nextMs)
        const restart: InstanceRestart = {
          phase,
          instance,
          label,
          atSeconds: (atMs - steadyAtMs) / 1000,
          exitSeconds: (exitMs - atMs) / 1000,
          exit,
          rebalancedSeconds: owned === undefined ? undefined : (owned.atMs - atMs) / 1000,
          split: owned?.split,
        }
        restarts.push(restart)
        log(`${contender.name}: ${label}, instance ${instance}: gone after ${restart.exitSeconds.toFixed(1)} s (${exit}), all partitions owned again ${owned === undefined ? 'not within the interval' : `after ${((owned.atMs - atMs) / 1000).toFixed(1)} s (${owned.split.join('/')})`}`)
        await sleep(Math.max(0, nextMs - performance.now()))
      }
    }
    written = await producer.stop()
    producerStopped = true
    writerStoppedMs = performance.now()
    log(`${contender.name}: writer stopped after ${written} records; waiting for the target to catch up`)
    while (caughtUpMs === undefined && performance.now() - writerStoppedMs < settings.timeoutMs) {
      const last = poller.polls.at(-1)
      if (last !== undefined && last.atMs > writerStoppedMs && last.target.every((end, p) => end >= (last.source[p] ?? 0))) caughtUpMs = last.atMs
      else await sleep(settings.pollIntervalMs)
    }
    for (const instance of instances) {
      await stopChild(instance.child, 60_000)
      finalExits.push(describeExit(await instance.child.exited))
    }
  } finally {
    // The run already failed: its error is the one reported, not the writer's.
    if (!producerStopped) await producer.stop().catch(() => 0)
    for (const instance of instances) await stopChild(instance.child)
    await poller.stop()
  }

  const sourceRecords = await readOffsetKeys(context.source.bootstrap, topic)
  const targetRecords = await readOffsetKeys(context.target.bootstrap, topic)
  const comparison = compareCopies(sourceRecords, targetRecords)
  const polls = poller.polls
  // The last restart's window runs on through the catch-up: what it left behind is copied then.
  const windows = stallWindows(steadyAtMs, signals, caughtUpMs ?? polls.at(-1)?.atMs ?? writerStoppedMs, settings.pollIntervalMs * 2)
  const stalls = windowStalls(windows, partitionStalls(polls, settings.partitions), polls, settings.stallThresholdSeconds)
  const duplicatesByWindow = new Map<string, number>()
  let duplicatesOutsideWindows = 0
  for (const copy of duplicateCopies(sourceRecords, targetRecords)) {
    const window = windowOfTargetOffset(windows, polls, copy.partition, copy.offset)
    if (window === undefined) duplicatesOutsideWindows++
    else duplicatesByWindow.set(window, (duplicatesByWindow.get(window) ?? 0) + 1)
  }
  return {
    contender: contender.name,
    label: contender.label,
    exactlyOnce: contender.exactlyOnce === true,
    topic,
    group: mirrorGroupId({ tag }),
    written,
    sourceRecords: comparison.sourceRecords,
    targetRecords: comparison.targetRecords,
    missing: comparison.missing,
    duplicates: comparison.duplicates,
    outOfOrderPartitions: comparison.outOfOrderPartitions,
    caughtUpSeconds: caughtUpMs === undefined ? undefined : (caughtUpMs - writerStoppedMs) / 1000,
    startSplit,
    restarts,
    windows: stalls.map(window => ({ ...window, duplicates: duplicatesByWindow.get(window.label) ?? 0 })),
    duplicatesOutsideWindows,
    polls: polls.length,
    finalExits,
  }
}
