import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { portAnswers } from '../../scripts/local-kafka/clusters.js'
import { waitUntil } from './wait.js'

export const REALM = 'EXAMPLE.TEST'

/** One krb5kdc process the helper started, and its exit. */
interface KdcRun {
  readonly child: ChildProcess
  readonly exited: Promise<void>
}

/** Ports tried before the KDC's start fails. */
const START_ATTEMPTS = 5

/** The KDC's log file (its reason for exiting), or '' when it wrote none. */
function kdcLog (dir: string): string {
  try {
    return readFileSync(join(dir, 'kdc.log'), 'utf8').trim().split('\n').slice(-3).join(' | ')
  } catch {
    // No log written before it exited: its own output says why.
    return ''
  }
}

/** Where Debian's krb5-kdc and krb5-admin-server put their programs (/usr/sbin may be off a user's PATH). */
function program (name: string): string {
  for (const dir of ['/usr/sbin', '/usr/local/sbin', '/usr/bin']) {
    try {
      execFileSync('test', ['-x', join(dir, name)])
      return join(dir, name)
    } catch {
      // Not in this folder: try the next.
    }
  }
  return name
}

/**
 * A real MIT Kerberos KDC (Debian's `krb5-kdc`) for one test: its own krb5.conf, kdc.conf and
 * database in a temporary folder, realm `EXAMPLE.TEST`, listening on TCP (and UDP) 127.0.0.1 on a
 * port from `TEST_EXTRA_PORTS` + 90 on. Clients use TCP and take host names as given
 * (`dns_canonicalize_hostname = false`, `rdns = false`), so `kafka/127.0.0.1` is the service
 * principal of a broker reached at 127.0.0.1. Stopped and removed when the test ends.
 */
export class MitKdc {
  /** The krb5.conf for clients: KRB5_CONFIG for the sidecar, -Djava.security.krb5.conf for Kafka. */
  readonly krb5Conf: string
  readonly #dir: string
  readonly #env: NodeJS.ProcessEnv

  private constructor (dir: string, readonly port: number) {
    this.#dir = dir
    this.krb5Conf = join(dir, 'krb5.conf')
    this.#env = { ...process.env, KRB5_CONFIG: this.krb5Conf, KRB5_KDC_PROFILE: join(dir, 'kdc.conf') }
  }

  /**
   * Starts the KDC. Its port is checked free first, but a port can still be taken between the check
   * and krb5kdc's bind (a client connection's ephemeral port, a UDP socket): a KDC that exits at
   * start is started again on the next port, up to `START_ATTEMPTS` ports, and the error names each
   * port with the KDC's own log.
   */
  static async start (t: TestContext): Promise<MitKdc> {
    const dir = mkdtempSync(join(tmpdir(), 'mirror-kdc-'))
    const runs: KdcRun[] = []
    t.after(async () => {
      for (const { child } of runs) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await Promise.all(runs.map(run => run.exited))
      rmSync(dir, { recursive: true, force: true })
    })
    let port = Number(process.env.TEST_EXTRA_PORTS ?? 39000) + 90
    const failures: string[] = []
    for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++, port++) {
      while (await portAnswers(port)) port++
      const kdc = new MitKdc(dir, port)
      kdc.#writeConfigs()
      if (attempt === 1) {
        execFileSync(program('kdb5_util'), ['create', '-s', '-r', REALM, '-P', randomBytes(12).toString('hex')], {
          env: kdc.#env,
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      }
      const failure = await kdc.#run(runs)
      if (failure === undefined) return kdc
      failures.push(`port ${port}: ${failure}`)
    }
    throw new Error(`krb5kdc did not start: ${failures.join('; ')}`)
  }

  #writeConfigs (): void {
    writeFileSync(this.krb5Conf, [
      '[libdefaults]',
      `  default_realm = ${REALM}`,
      '  dns_lookup_kdc = false',
      '  dns_lookup_realm = false',
      '  dns_canonicalize_hostname = false',
      '  rdns = false',
      '  udp_preference_limit = 1',
      '[realms]',
      `  ${REALM} = {`,
      `    kdc = 127.0.0.1:${this.port}`,
      '  }',
      '',
    ].join('\n'))
    writeFileSync(join(this.#dir, 'kdc.conf'), [
      '[kdcdefaults]',
      `  kdc_ports = ${this.port}`,
      `  kdc_tcp_ports = ${this.port}`,
      '[realms]',
      `  ${REALM} = {`,
      `    database_name = ${join(this.#dir, 'principal')}`,
      `    key_stash_file = ${join(this.#dir, 'stash')}`,
      `    acl_file = ${join(this.#dir, 'kadm5.acl')}`,
      '    max_life = 1h',
      '    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal',
      '  }',
      '[logging]',
      `  kdc = FILE:${join(this.#dir, 'kdc.log')}`,
      '',
    ].join('\n'))
  }

  /**
   * Runs krb5kdc until it listens (undefined), or until it exits: then its output and log. It is
   * stopped when the test ends (it is added to `runs`).
   */
  async #run (runs: KdcRun[]): Promise<string | undefined> {
    const child = spawn(program('krb5kdc'), ['-n', '-P', join(this.#dir, 'kdc.pid')], { env: this.#env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    runs.push({ child, exited: new Promise<void>(resolve => child.once('exit', () => resolve())) })
    let failure: string | undefined
    await waitUntil(async () => {
      if (child.exitCode !== null) {
        failure = `exited with ${child.exitCode}: ${output.trim()} ${kdcLog(this.#dir)}`.trim()
        return true
      }
      return await portAnswers(this.port)
    }, { timeoutMs: 15_000, intervalMs: 100, message: `krb5kdc listening on 127.0.0.1:${this.port}` })
    return failure
  }

  /** Runs one kadmin.local query on the database; rejects with its output when it fails. */
  async kadmin (query: string): Promise<string> {
    return await new Promise((resolve, reject) => {
      execFile(program('kadmin.local'), ['-q', query], { env: this.#env }, (error, stdout, stderr) => {
        // kadmin.local exits 0 even when the query failed: its error goes to stderr.
        if (error !== null || /^kadmin\.local: |error|not found|exists/im.test(stderr)) {
          reject(new Error(`kadmin.local -q "${query}": ${stderr || String(error)}`))
        } else resolve(stdout)
      })
    })
  }

  /** Adds `principal` with a random key and exports its key into a new keytab file in the KDC's folder; returns the file. */
  async principalWithKeytab (principal: string, file = `${principal.replace(/[^A-Za-z0-9]+/g, '-')}.keytab`): Promise<string> {
    await this.kadmin(`addprinc -randkey ${principal}`)
    return await this.exportKeytab(principal, file)
  }

  /** Exports `principal`'s key into `file` (in the KDC's folder); `ktadd` gives the principal a new random key, so keytabs exported before no longer work. */
  async exportKeytab (principal: string, file: string): Promise<string> {
    const path = join(this.#dir, file)
    await this.kadmin(`ktadd -k ${path} ${principal}`)
    return path
  }

  /** The keys held in `keytab` (format 0x0502), as hex and base64: what must never appear in any output. */
  static keysOf (keytab: string): string[] {
    const bytes = readFileSync(keytab)
    const keys: string[] = []
    for (let at = 2; at + 4 <= bytes.length;) {
      const size = bytes.readInt32BE(at)
      at += 4
      if (size <= 0) { at += -size; if (size === 0) break; continue }
      let p = at + 2 + 2 + bytes.readUInt16BE(at + 2)
      for (let i = 0; i < bytes.readUInt16BE(at); i++) p += 2 + bytes.readUInt16BE(p)
      p += 4 + 4 + 1 + 2
      const key = bytes.subarray(p + 2, p + 2 + bytes.readUInt16BE(p))
      keys.push(key.toString('hex'), key.toString('base64'))
      at += size
    }
    return keys
  }
}
