// Preloaded via NODE_OPTIONS; acts only in the sidecar. Samples memory every second; writes a heap snapshot when /tmp/scale3-snap-<pid> appears.
import { appendFileSync, existsSync, unlinkSync } from 'node:fs'
import v8 from 'node:v8'
import { PerformanceObserver } from 'node:perf_hooks'
if ((process.argv[1] ?? '').endsWith('mirror-sidecar.js')) {
  const out = `/tmp/scale3-trace-${process.pid}.jsonl`
  let gcs = { minor: 0, major: 0, ms: 0 }
  new PerformanceObserver(list => { for (const e of list.getEntries()) { if (e.detail?.kind === 1) gcs.minor++; else gcs.major++; gcs.ms += e.duration } }).observe({ entryTypes: ['gc'] })
  const t0 = Date.now()
  const timer = setInterval(() => {
    const m = process.memoryUsage()
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map(s => [s.space_name.replace('_space', ''), Math.round(s.space_used_size / 2 ** 20)]))
    const cpu = process.cpuUsage()
    appendFileSync(out, JSON.stringify({ t: (Date.now() - t0) / 1000, rss: Math.round(m.rss / 2 ** 20), heapTotal: Math.round(m.heapTotal / 2 ** 20), heapUsed: Math.round(m.heapUsed / 2 ** 20), external: Math.round(m.external / 2 ** 20), arrayBuffers: Math.round(m.arrayBuffers / 2 ** 20), spaces, cpu: (cpu.user + cpu.system) / 1e6, gcs }) + '\n')
    gcs = { minor: 0, major: 0, ms: 0 }
    const trigger = `/tmp/scale3-snap-${process.pid}`
    if (existsSync(trigger)) { unlinkSync(trigger); const f = v8.writeHeapSnapshot(`/tmp/scale3-${process.pid}.heapsnapshot`); appendFileSync(out, JSON.stringify({ snapshot: f }) + '\n') }
  }, 1000)
  timer.unref()
}
