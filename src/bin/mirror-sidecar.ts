#!/usr/bin/env node
import yargs from 'yargs'
import { hideBin } from 'yargs/helpers'
import { configFromMm1, mergeEnv, MM1_FLAGS, type Mm1Values } from '../config/mm1-args.js'
import { MirrorSidecar } from '../mirror-sidecar.js'
import { ConfigError, MirrorError } from '../shared/errors.js'
import { createLogger } from '../shared/logger.js'

const EXIT_OK = 0
const EXIT_ERROR = 2

function fail (message: string): never {
  process.stderr.write(`mirror-sidecar: ${message}\n`)
  process.exit(EXIT_ERROR)
}

async function main (): Promise<void> {
  const parser = yargs(hideBin(process.argv))
    .scriptName('mirror-sidecar')
    .usage('$0 --consumer.config source.properties --producer.config target.properties --whitelist "orders.*,payments"\n\nCopies topics from a source Kafka cluster to a target cluster, partition by partition, committing\non the source only what the target acknowledged. Takes MirrorMaker 1 flags; every flag can also be\nset as MIRROR_<FLAG> in the environment (dots as underscores), flags win.')
    .parserConfiguration({ 'dot-notation': false, 'camel-case-expansion': false, 'duplicate-arguments-array': true, 'boolean-negation': false })
    .options(MM1_FLAGS as never)
    .strict()
    .version(false)
    .help('help')
    .alias('help', 'h')
    .example('$0 --consumer.config source.properties --producer.config target.properties --whitelist ".*" --num.streams 2', 'mirror every topic with two consumers')
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .fail((message, error) => fail(error?.message ?? `${message}; see mirror-sidecar --help`))
  const argv = await parser.parseAsync() as Record<string, unknown>
  const values: Mm1Values = {}
  for (const name of Object.keys(MM1_FLAGS) as Array<keyof typeof MM1_FLAGS>) {
    if (argv[name] !== undefined) values[name] = argv[name] as string | string[] | boolean
  }

  let config
  try {
    config = configFromMm1(mergeEnv(values, process.env))
  } catch (error) {
    if (error instanceof ConfigError) fail(error.problems.length === 1 ? error.message : `${error.problems.length} problems in the configuration:\n  ${error.message.split('\n').join('\n  ')}`)
    throw error
  }

  const logger = createLogger({ level: config.logLevel })
  const sidecar = new MirrorSidecar(config, { logger })
  let signals = 0
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++
    if (signals === 1) {
      logger.info('signal received; draining', { signal })
      void sidecar.stop()
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
    await sidecar.done
    process.exitCode = EXIT_OK
  } catch (error) {
    await sidecar.stop().catch(() => {})
    const message = error instanceof MirrorError ? error.message : String(error)
    logger.error('mirror stopped', { error })
    process.stderr.write(`mirror-sidecar: ${message}\n`)
    process.exitCode = EXIT_ERROR
  }
}

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)))
