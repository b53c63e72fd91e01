import { fileURLToPath } from 'node:url'
import { dirname, join, resolve } from 'node:path'
import { existsSync } from 'node:fs'

/** The repository root: the nearest folder above this file holding package.json. */
export function projectRoot (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = resolve(dir, '..')
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url))
    dir = parent
  }
  return dir
}

/** Where local clusters keep config, data, logs and pid files (`LOCAL_KAFKA_HOME`, default `.local-kafka/`). */
export function clustersHome (): string {
  return process.env.LOCAL_KAFKA_HOME ?? join(projectRoot(), '.local-kafka')
}
