import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ProblemList } from './values.js'

/** Where Strimzi mounts a KafkaMirrorMaker2's Secrets in its pods, per cluster alias (`KafkaMirrorMaker2Cluster`). */
const STRIMZI_MOUNTS = {
  certs: '/opt/kafka/mm2-certs',
  password: '/opt/kafka/mm2-password',
  oauth: '/opt/kafka/mm2-oauth',
} as const
export type SecretMount = keyof typeof STRIMZI_MOUNTS

/**
 * Reads the Secrets a KafkaMirrorMaker2 resource names, as files laid out the way a Kubernetes
 * secret volume lays them out (`<secretName>/<key>`): under `secretsDir` when given
 * (`--strimzi.secrets.dir`), else where Strimzi mounts them (`/opt/kafka/mm2-certs/<alias>/<secretName>/<key>`,
 * `mm2-password`, `mm2-oauth`). A missing file is a problem naming the resource field.
 */
export class StrimziSecrets {
  readonly #secretsDir: string | undefined
  readonly #problems: ProblemList

  constructor (secretsDir: string | undefined, problems: ProblemList) {
    this.#secretsDir = secretsDir
    this.#problems = problems
  }

  #directory (mount: SecretMount, alias: string, secretName: string): string {
    return this.#secretsDir === undefined ? join(STRIMZI_MOUNTS[mount], alias, secretName) : join(this.#secretsDir, secretName)
  }

  #hint (): string {
    return this.#secretsDir === undefined
      ? 'mount the Secret there (as Strimzi does) or give --strimzi.secrets.dir'
      : "put the Secret's keys there as files, as a Kubernetes secret volume does"
  }

  /** The text of key `key` of Secret `secretName`; undefined (and a problem on `field`) when missing. */
  read (field: string, mount: SecretMount, alias: string, secretName: string, key: string): string | undefined {
    const path = join(this.#directory(mount, alias, secretName), key)
    try {
      return readFileSync(path, 'utf8')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      this.#problems.add(
        field,
        undefined,
        `key ${key} of Secret ${secretName}: ${path}: ${code === 'ENOENT' ? 'no such file' : `cannot read it (${code ?? 'error'})`}; ${this.#hint()}`
      )
      return undefined
    }
  }

  /** The texts of the keys of Secret `secretName` matching the glob `pattern` (`*` and `?`), in name order. */
  readMatching (field: string, mount: SecretMount, alias: string, secretName: string, pattern: string): string[] | undefined {
    const directory = this.#directory(mount, alias, secretName)
    let names: string[]
    try {
      // A secret volume also holds `..data` and timestamped folders: those start with a dot.
      names = readdirSync(directory).filter(name => !name.startsWith('.')).sort()
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      this.#problems.add(field, secretName, `${directory}: ${code === 'ENOENT' ? 'no such folder' : `cannot read it (${code ?? 'error'})`}; ${this.#hint()}`)
      return undefined
    }
    const glob = new RegExp(`^${pattern.split('').map(c => c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')).join('')}$`, 'u')
    const matching = names.filter(name => glob.test(name))
    if (matching.length === 0) {
      this.#problems.add(field, pattern, `no key of Secret ${secretName} in ${directory} matches; give the certificate's key name or a pattern such as *.crt`)
      return undefined
    }
    return matching.map(name => this.read(field, mount, alias, secretName, name) ?? '')
  }
}
