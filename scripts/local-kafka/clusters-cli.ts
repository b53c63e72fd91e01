#!/usr/bin/env node
import { performance } from 'node:perf_hooks'
import { clustersDown, clustersUp, defaultClusters, LocalKafkaError } from './clusters.js'

async function main (command: string | undefined): Promise<number> {
  switch (command) {
    case 'up': {
      const started = performance.now()
      const { source, target } = await clustersUp()
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      console.log(`source  ${source.bootstrap}  (log ${source.logFile})`)
      console.log(`target  ${target.bootstrap}  (log ${target.logFile})`)
      console.log(`clusters up in ${seconds} s`)
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
      return 0
    }
    default:
      console.error('usage: clusters-cli up|down|status')
      return 2
  }
}

main(process.argv[2]).then(code => { process.exitCode = code }, (error: unknown) => {
  console.error(error instanceof LocalKafkaError ? `error: ${error.message}` : error)
  process.exitCode = 2
})
