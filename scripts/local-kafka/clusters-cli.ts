#!/usr/bin/env node
import { performance } from 'node:perf_hooks'
import { clustersDown, clustersUp, defaultClusters, LocalKafkaError, nodeClustersOnDisk, nodeClustersUp } from './clusters.js'

/** `--brokers N` (or `--brokers=N`) from the arguments after the command; 1 when absent. */
function brokersArg (args: readonly string[]): number {
  const index = args.findIndex(arg => arg === '--brokers' || arg.startsWith('--brokers='))
  if (index < 0) return 1
  const raw = args[index]?.includes('=') === true ? args[index]?.split('=')[1] : args[index + 1]
  const brokers = Number(raw)
  if (!Number.isInteger(brokers) || brokers < 1 || brokers > 9) {
    throw new LocalKafkaError(`--brokers "${raw ?? ''}": expected a whole number from 1 to 9 (the nodes of each cluster)`)
  }
  return brokers
}

async function main (command: string | undefined, args: readonly string[]): Promise<number> {
  switch (command) {
    case 'up': {
      const started = performance.now()
      const brokers = brokersArg(args)
      const seconds = (): string => ((performance.now() - started) / 1000).toFixed(1)
      if (brokers === 1) {
        const { source, target } = await clustersUp()
        console.log(`source  ${source.bootstrap}  (log ${source.logFile})`)
        console.log(`target  ${target.bootstrap}  (log ${target.logFile})`)
      } else {
        const { source, target } = await nodeClustersUp(brokers)
        console.log(`source  ${source.bootstrap}  (logs ${source.dir}/node-*/server.log)`)
        console.log(`target  ${target.bootstrap}  (logs ${target.dir}/node-*/server.log)`)
      }
      console.log(`clusters up in ${seconds()} s`)
      return 0
    }
    case 'down':
      await clustersDown()
      console.log('clusters stopped, data removed')
      return 0
    case 'status': {
      const { source, target } = defaultClusters()
      for (const status of [await source.status(), await target.status()]) {
        console.log(`${status.name.padEnd(7)} ${status.bootstrap.padEnd(16)} ${status.running ? `running (pid ${status.pid})` : 'stopped'}  ${status.dir}`)
      }
      for (const cluster of await nodeClustersOnDisk()) {
        const status = await cluster.status()
        console.log(`${status.name}  ${status.dir}`)
        for (const node of status.nodes) {
          const state = node.frozen ? `frozen (pid ${node.pid})` : node.running ? `running (pid ${node.pid})` : 'stopped'
          console.log(`  node ${node.nodeId} ${node.bootstrap.padEnd(16)} ${state}`)
        }
      }
      return 0
    }
    default:
      console.error('usage: clusters-cli up [--brokers N]|down|status')
      return 2
  }
}

main(process.argv[2], process.argv.slice(3)).then(code => { process.exitCode = code }, (error: unknown) => {
  console.error(error instanceof LocalKafkaError ? `error: ${error.message}` : error)
  process.exitCode = 2
})
