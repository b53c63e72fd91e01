import { spawn } from 'node:child_process'
import { stopChild, track, type TrackedChild } from './child-registry.js'

/**
 * The one consumer every contender is measured with: `kcat -C` on the target topic from the
 * beginning, printing each record's timestamp and key, unbuffered; receive time is taken when the
 * line arrives here. Keys are the record number in hex (`recordLines`): the records from number
 * `countFromRecord` on are kept (number, send time, latency), a phase of them is taken by number.
 */
export class LatencyConsumer {
  /** The first copy of each record counted, in arrival order: its number, when it was stamped (CreateTime, epoch ms) and its latency. */
  readonly #numbers: number[] = []
  readonly #sentAtMs: number[] = []
  readonly #latenciesMs: number[] = []
  readonly #countedKeys = new Set<string>()
  /** Lines read, warm-up records and duplicates included. */
  seen = 0
  /** Further copies of counted records already received (a mirror's re-delivery). */
  duplicates = 0
  #process: TrackedChild | undefined
  #partial = ''

  /** `readCommitted`: for exactly-once contenders, whose records count once their transaction committed. */
  constructor (readonly bootstrap: string, readonly topic: string, readonly readCommitted = false) {}

  /** Only records numbered this or higher (their key) are counted; none until it is set. */
  countFromRecord = Number.POSITIVE_INFINITY

  /** Distinct records counted so far. */
  get counted (): number { return this.#numbers.length }

  /** Send times and latencies of the records numbered `fromRecord` up to (not including) `toRecord`, in arrival order. */
  phase (fromRecord: number, toRecord = Number.POSITIVE_INFINITY): { sentAtMs: number[], latenciesMs: number[] } {
    const sentAtMs: number[] = []
    const latenciesMs: number[] = []
    for (let i = 0; i < this.#numbers.length; i++) {
      const number = this.#numbers[i]!
      if (number < fromRecord || number >= toRecord) continue
      sentAtMs.push(this.#sentAtMs[i]!)
      latenciesMs.push(this.#latenciesMs[i]!)
    }
    return { sentAtMs, latenciesMs }
  }

  start (): void {
    const isolation = this.readCommitted ? ['-X', 'isolation.level=read_committed'] : []
    const child = spawn('kcat', ['-C', '-b', this.bootstrap, '-t', this.topic, '-o', 'beginning', '-u', '-q', ...isolation, '-f', '%T %k\n'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    this.#process = track('kcat latency consumer', child)
    child.stdout.on('data', (chunk: Buffer) => {
      const now = Date.now()
      const lines = (this.#partial + chunk.toString('latin1')).split('\n')
      this.#partial = lines.pop() ?? ''
      for (const line of lines) {
        const space = line.indexOf(' ')
        const timestamp = Number(line.slice(0, space))
        if (space <= 0 || !Number.isFinite(timestamp)) continue
        this.seen++
        const key = line.slice(space + 1)
        const number = Number.parseInt(key, 16)
        if (number < this.countFromRecord) continue
        if (this.#countedKeys.has(key)) {
          this.duplicates++
          continue
        }
        this.#countedKeys.add(key)
        this.#numbers.push(number)
        this.#sentAtMs.push(timestamp)
        this.#latenciesMs.push(now - timestamp)
      }
    })
  }

  async stop (): Promise<void> {
    if (this.#process !== undefined) await stopChild(this.#process, 2_000)
  }
}
