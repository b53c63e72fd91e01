#!/usr/bin/env node
// First: V8 flags set before anything else is loaded.
import './v8-settings.js'
import yargs from 'yargs'
import { hideBin } from 'yargs/helpers'
import { configFromMm1, mergeEnv, MM1_FLAGS, type Mm1FlagName, type Mm1Values } from '../config/mm1-args.js'
import type { MirrorConfig } from '../config/mirror-config.js'
import { loadMessageHandlers, type LoadedMessageHandler } from '../config/message-handler-loader.js'
import { configFromMm2 } from '../config/mm2-config.js'
import { configFromStrimzi } from '../config/strimzi-mirror-maker2.js'
import { pastedFlagProblems } from '../config/pasted-flags.js'
import { printableConfig } from '../config/print-config.js'
import { renderPreflight, PREFLIGHT_FORMATS, type PreflightFormat } from '../sidecar/preflight/preflight-report.js'
import { runPreflight, somethingMissing } from '../sidecar/preflight/preflight.js'
import { renderStartPlan } from '../sidecar/offsets/start-plan-text.js'
import { withStartPositions } from '../sidecar/offsets/start-positions.js'
import { sidecarSettingsFromFlags, SIDECAR_FLAGS } from '../config/sidecar-settings.js'
import { ProblemList } from '../config/values.js'
import { assertKafkajsPatched } from '../kafka/kafkajs-internals.js'
import { targetProducerSetting } from '../kafka/target-producer.js'
import { sourceConsumerProblems, sourceConsumerSetting } from '../kafka/source-consumer.js'
import { packageVersion } from '../shared/package-version.js'
import { MirrorSidecar } from '../sidecar/mirror-sidecar.js'
import { ConfigError, MirrorError } from '../shared/errors.js'
import { createLogger } from '../shared/logger.js'
import { redactUrlsIn } from '../shared/redact-url.js'
import { IdleGc } from './idle-gc.js'
import { MONITORING_FILES, monitoringFile, RUNBOOK_URL_BASE_ENV, type MonitoringFile } from './monitoring-files.js'

const EXIT_OK = 0
/** `preflight`: something the run needs is missing. */
const EXIT_MISSING = 1
const EXIT_ERROR = 2

function fail (message: string): never {
  process.stderr.write(`mirror-sidecar: ${redactUrlsIn(message)}\n`)
  process.exit(EXIT_ERROR)
}

const MODE_FLAGS = {
  clusters: {
    type: 'string',
    array: true,
    describe: "With an mm2.properties file: run only the flows into these cluster aliases (as MirrorMaker 2's --clusters)",
  },
  'print-config': { type: 'boolean', describe: 'Print the resolved configuration of every flow as JSON (secrets redacted) and exit' },
  'dry-run': {
    type: 'boolean',
    describe:
      "Print where each partition of every flow would start and why (its own group, the exactly-once position, MirrorMaker 2's Connect offsets, auto.offset.reset), then exit without copying; connects to both clusters to read them, writes nothing",
  },
  strimzi: { type: 'string', describe: 'A Strimzi KafkaMirrorMaker2 resource (YAML, kafka.strimzi.io/v1 or v1beta2) instead of an mm2.properties file' },
  'strimzi.secrets.dir': {
    type: 'string',
    describe:
      'With --strimzi: a folder of <secretName>/<key> files holding the Secrets the resource names (default: where Strimzi mounts them, /opt/kafka/mm2-certs/<alias>/... and /opt/kafka/mm2-password/<alias>/...)',
  },
} as const

/** Flags of `mirror-sidecar preflight` only. */
const PREFLIGHT_FLAGS = {
  format: {
    type: 'string',
    choices: PREFLIGHT_FORMATS,
    default: 'table',
    describe: 'preflight: a table with the kafka-acls lines, json, or strimzi (a KafkaUser per cluster)',
  },
  principal: {
    type: 'string',
    describe: "preflight: the principal the grants name (default User:<the SASL user name>), e.g. 'User:CN=mirror' for a client certificate",
  },
} as const

/** The file modes (mm2.properties, --strimzi): where the configuration comes from. */
type FileMode = { kind: 'mm2', path: string } | { kind: 'strimzi', path: string, secretsDir: string | undefined }

/** mm2.properties or Strimzi mode: the file plus sidecar-wide flags; MirrorMaker 1 flags conflict with it. */
function configFromFileArgs (mode: FileMode, values: Mm1Values, clusters: string[] | undefined): MirrorConfig {
  const problems = new ProblemList()
  const what = mode.kind === 'mm2' ? `an mm2.properties file (${mode.path})` : `--strimzi ${mode.path}`
  for (const flag of Object.keys(values) as Mm1FlagName[]) {
    if ((SIDECAR_FLAGS as readonly string[]).includes(flag) || flag === 'new.consumer') continue
    problems.add(
      `--${flag}`,
      String(values[flag]),
      `cannot be combined with ${what}; set clusters, flows and topics in the file, or drop the file and use MirrorMaker 1 flags`
    )
  }
  const settings = sidecarSettingsFromFlags(
    mergeEnv(Object.fromEntries(SIDECAR_FLAGS.flatMap(f => (values[f] === undefined ? [] : [[f, values[f]]]))), process.env),
    problems
  )
  const options = { settings, ...(clusters === undefined ? {} : { clusters }) }
  return mode.kind === 'mm2'
    ? configFromMm2(mode.path, options, problems)
    : configFromStrimzi(mode.path, { ...options, ...(mode.secretsDir === undefined ? {} : { secretsDir: mode.secretsDir }) }, problems)
}

/** One line for one problem, else a count and one indented line each. */
function problemsText (error: ConfigError, what: string): string {
  return error.problems.length === 1 ? error.message : `${error.problems.length} problems in the ${what}:\n  ${error.message.split('\n').join('\n  ')}`
}

/** `mirror-sidecar grafana|alerts [--runbook-url-base URL]`: prints the dashboard or the alert rules of the package. */
async function printMonitoringFile (file: MonitoringFile, args: string[]): Promise<void> {
  let parser = yargs(args)
    .scriptName(`mirror-sidecar ${file}`)
    .usage(`$0${file === 'alerts' ? ' [--runbook-url-base URL]' : ''}\n\n${MONITORING_FILES[file].describe}`)
    .strict()
    .version(false)
    .help('help')
    .locale('en')
    .fail((message, error) => fail(error?.message ?? `${message}; see mirror-sidecar ${file} --help`))
  if (file === 'alerts') {
    parser = parser.option('runbook-url-base', {
      type: 'string',
      describe: `Where docs/runbook.md is published: each rule's runbook_url becomes this plus #<alert> (default $${RUNBOOK_URL_BASE_ENV}; else the path docs/runbook.md#<alert>)`,
    })
  }
  const argv = await parser.parseAsync() as { 'runbook-url-base'?: string }
  const flag = argv['runbook-url-base']
  const env = process.env[RUNBOOK_URL_BASE_ENV]
  const fromEnv = env !== undefined && env !== '' ? { value: env, key: RUNBOOK_URL_BASE_ENV } : undefined
  const base = flag !== undefined ? { value: flag, key: '--runbook-url-base' } : fromEnv
  try {
    process.stdout.write(monitoringFile(file, file === 'alerts' ? base : undefined))
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error))
  }
}

/** Parses the command line of a run (or of `preflight`, which takes the same configuration). */
async function parseRunArgs (args: string[], flags: Record<string, unknown>): Promise<Record<string, unknown>> {
  const parser = yargs(args)
    .scriptName('mirror-sidecar')
    .command('$0 [mm2]', 'Copies topics between Kafka clusters.', y =>
      y.positional('mm2', { type: 'string', describe: 'A MirrorMaker 2 mm2.properties file (instead of MirrorMaker 1 flags)' })
    )
    .usage(
      '$0 --consumer.config source.properties --producer.config target.properties --whitelist "orders.*,payments"\n$0 mm2.properties [--clusters B] [--dry-run]\n$0 --strimzi kmm2.yaml [--strimzi.secrets.dir /etc/secrets]\n$0 preflight <the same configuration> [--format table|json|strimzi]\n$0 grafana | alerts [--runbook-url-base URL]\n\nCopies topics from a source Kafka cluster to a target cluster, partition by partition, committing\non the source only what the target acknowledged. Takes MirrorMaker 1 flags, a MirrorMaker 2\nmm2.properties file or a Strimzi KafkaMirrorMaker2 resource; every MirrorMaker 1 flag can also be set as MIRROR_<FLAG> in the environment\n(dots as underscores), flags win.'
    )
    .parserConfiguration({ 'dot-notation': false, 'camel-case-expansion': false, 'duplicate-arguments-array': true, 'boolean-negation': false })
    .options(flags as never)
    .completion('completion', 'Print a bash completion script (mirror-sidecar completion >> ~/.bashrc)')
    .strict()
    .version('version', 'Print the version and exit', packageVersion())
    .help('help')
    .alias('help', 'h')
    .example(
      '$0 --consumer.config source.properties --producer.config target.properties --whitelist ".*" --num.streams 2',
      'mirror every topic with two consumers'
    )
    .example('$0 mm2.properties --clusters B', 'run the flows into cluster B of a MirrorMaker 2 configuration')
    .example('$0 preflight mm2.properties --format strimzi', 'the rights the run needs on each cluster, checked; exit 1 when one is missing')
    .example('$0 mm2.properties --dry-run', 'where each partition would start: after MirrorMaker 2 stopped, from its positions')
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .locale('en')
    .fail((message, error) => fail(error?.message ?? `${message}; see mirror-sidecar --help`))
  return await parser.parseAsync() as Record<string, unknown>
}

/** The configuration the parsed command line names, with what its flows ask of the source consumer checked (`sourceConsumerProblems`). */
function configFromArgv (argv: Record<string, unknown>): MirrorConfig {
  const config = configOfArgv(argv)
  const problems = sourceConsumerProblems(config.flows, process.env)
  if (problems.length > 0) fail(problemsText(new ConfigError(problems), 'configuration'))
  return config
}

/** The configuration the parsed command line names: a Strimzi resource, an mm2.properties file, or MirrorMaker 1 flags (and the environment). */
function configOfArgv (argv: Record<string, unknown>): MirrorConfig {
  const values: Mm1Values = {}
  for (const name of Object.keys(MM1_FLAGS) as Array<keyof typeof MM1_FLAGS>) {
    if (argv[name] !== undefined) values[name] = argv[name] as string | string[] | boolean
  }
  const mm2 = argv.mm2 as string | undefined
  const clusters = (argv.clusters as string[] | undefined)?.flatMap(c => String(c).split(',')).map(c => c.trim()).filter(c => c !== '')
  const strimzi = argv.strimzi as string | undefined
  const secretsDir = argv['strimzi.secrets.dir'] as string | undefined
  try {
    targetProducerSetting(process.env)
    sourceConsumerSetting(process.env)
    if (strimzi !== undefined && mm2 !== undefined) {
      throw new ConfigError([{ key: '--strimzi', value: strimzi, message: `cannot be combined with the mm2.properties file ${mm2}; give one of them` }])
    } else if (secretsDir !== undefined && strimzi === undefined) {
      throw new ConfigError([
        {
          key: '--strimzi.secrets.dir',
          value: secretsDir,
          message: 'only applies with --strimzi; give the KafkaMirrorMaker2 file: mirror-sidecar --strimzi kmm2.yaml --strimzi.secrets.dir DIR',
        },
      ])
    } else if (strimzi !== undefined) {
      return configFromFileArgs({ kind: 'strimzi', path: strimzi, secretsDir }, values, clusters)
    } else if (mm2 !== undefined) {
      return configFromFileArgs({ kind: 'mm2', path: mm2 }, values, clusters)
    } else {
      if (clusters !== undefined) {
        throw new ConfigError([
          {
            key: '--clusters',
            value: clusters.join(','),
            message: 'only applies to an mm2.properties file or --strimzi; give the file first: mirror-sidecar mm2.properties --clusters B',
          },
        ])
      }
      return configFromMm1(mergeEnv(values, process.env))
    }
  } catch (error) {
    if (error instanceof ConfigError) fail(problemsText(error, 'configuration'))
    throw error
  }
}

/** `--dry-run`: where each partition of each flow would start, and why; nothing copied. */
async function printStartPlans (config: MirrorConfig, logger: ReturnType<typeof createLogger>): Promise<void> {
  try {
    for (const flow of config.flows) {
      const plan = await withStartPositions(flow, logger, positions => positions.plan('always'))
      process.stdout.write(renderStartPlan(plan, flow.consumer.autoOffsetReset) + '\n')
    }
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error))
  }
  process.stdout.write('dry run: nothing copied, nothing committed\n')
  process.exitCode = EXIT_OK
}

/** Runs the sidecar until it stops: the first SIGINT or SIGTERM drains (within the drain timeout plus a backstop), a second exits at once. */
async function runSidecar (
  config: MirrorConfig,
  logger: ReturnType<typeof createLogger>,
  messageHandlers: ReadonlyMap<string, LoadedMessageHandler>
): Promise<void> {
  const sidecar = new MirrorSidecar(config, { logger, messageHandlers })
  const idleGc = config.idleGc === false ? undefined : new IdleGc(logger)
  let signals = 0
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++
    if (signals === 1) {
      logger.info('signal received; draining', { signal })
      void sidecar.stop()
      // Past the drain every stop step is bounded (final commit, each client's disconnect); this is the backstop.
      const graceMs = config.drainTimeoutMs + 60_000
      setTimeout(() => {
        logger.error('shutdown did not finish in time; exiting, in-flight records stay uncommitted', { graceMs })
        process.exit(EXIT_ERROR)
      }, graceMs).unref()
    } else {
      logger.warn('second signal; exiting now, in-flight records stay uncommitted', { signal })
      sidecar.abort()
      process.exit(130)
    }
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  try {
    await sidecar.start()
    idleGc?.start()
    await sidecar.done
    idleGc?.stop()
    await sidecar.stop()
    // Stopped, committed, spans flushed: exit now rather than wait for the Kafka client's retry timers.
    process.exit(EXIT_OK)
  } catch (error) {
    idleGc?.stop()
    await sidecar.stop().catch(stopError => { logger.error('stopping after the failure failed too', { error: stopError }) })
    const message = error instanceof MirrorError ? error.message : String(error)
    logger.error('mirror stopped', { error })
    process.stderr.write(`mirror-sidecar: ${redactUrlsIn(message)}\n`)
    process.exitCode = EXIT_ERROR
  }
}

async function main (): Promise<void> {
  assertKafkajsPatched()
  const argList = hideBin(process.argv)
  if (argList[0] === 'grafana' || argList[0] === 'alerts') {
    await printMonitoringFile(argList[0], argList.slice(1))
    return
  }
  // `preflight` first: the same configuration as a run, checked against the clusters instead of run.
  const preflight = argList[0] === 'preflight'
  const args = preflight ? argList.slice(1) : argList
  const flags = preflight ? { ...MM1_FLAGS, ...MODE_FLAGS, ...PREFLIGHT_FLAGS } : { ...MM1_FLAGS, ...MODE_FLAGS }
  // Before yargs: a flag pasted with an en dash would otherwise be taken for the mm2.properties file.
  const pasted = pastedFlagProblems(args, [...Object.keys(flags), 'help', 'version'])
  if (pasted.length > 0) fail(problemsText(new ConfigError(pasted), 'command line'))
  const argv = await parseRunArgs(args, flags)
  const config = configFromArgv(argv)
  const logger = createLogger({ level: config.logLevel })
  if (config.ignoredKeys !== undefined && config.ignoredKeys.length > 0) {
    logger.warn('configuration keys ignored (no effect in the sidecar)', { keys: config.ignoredKeys })
  }
  if (preflight) {
    try {
      const report = await runPreflight(config, logger, { principal: argv.principal as string | undefined })
      process.stdout.write(renderPreflight(report, argv.format as PreflightFormat) + '\n')
      process.exitCode = somethingMissing(report) ? EXIT_MISSING : EXIT_OK
    } catch (error) {
      fail(error instanceof Error ? error.message : String(error))
    }
    return
  }
  if (argv['print-config'] === true) {
    process.stdout.write(JSON.stringify(printableConfig(config), null, 2) + '\n')
    process.exitCode = EXIT_OK
    return
  }
  let messageHandlers: ReadonlyMap<string, LoadedMessageHandler>
  try {
    // Runs the handler modules' top-level code: after --print-config, before anything connects.
    messageHandlers = await loadMessageHandlers(config)
  } catch (error) {
    if (error instanceof ConfigError) fail(problemsText(error, 'configuration'))
    throw error
  }
  if (argv['dry-run'] === true) {
    await printStartPlans(config, logger)
    return
  }
  await runSidecar(config, logger, messageHandlers)
}

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)))
