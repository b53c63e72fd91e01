/** Where stderr is not a terminal: nothing drawn. */
const NO_PROGRESS_BAR = {
  update () { /* no terminal to draw on */ },
  done () { /* nothing drawn */ },
}

/** The progress of a read over source ranges on stderr when it is a terminal (partition, share of its range, MB/s; at most every 100 ms); else nothing. */
export function progressBar (): {
  update: (p: { partition: number, sourceOffset: number, fromOffset: number, untilOffset: number, bytes: number }) => void
  done: () => void
} {
  if (process.stderr.isTTY !== true) return NO_PROGRESS_BAR
  const started = Date.now()
  let last = 0
  return {
    update: p => {
      const now = Date.now()
      if (now - last < 100) return
      last = now
      const span = Math.max(1, p.untilOffset - p.fromOffset)
      const ratio = Math.min(1, Math.max(0, (p.sourceOffset + 1 - p.fromOffset) / span))
      const width = 30
      const filled = Math.round(ratio * width)
      const mbps = p.bytes / 1_048_576 / Math.max(0.001, (now - started) / 1000)
      process.stderr.write(
        `\r\x1b[Kpartition ${p.partition} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0)}% ${mbps.toFixed(1)} MB/s`
      )
    },
    done: () => {
      process.stderr.write('\r\x1b[K')
    },
  }
}
