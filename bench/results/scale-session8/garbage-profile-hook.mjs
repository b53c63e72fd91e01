// Preloaded via NODE_OPTIONS; only in the sidecar: sampling heap profiler from the start; when the old
// generation first exceeds 230 MiB after the copy (t > 15 s), writes what is still uncollected (garbage
// included: the samples go only when V8 collects them) to /tmp/scale3-alloc-<pid>.heapprofile.
import { Session } from 'node:inspector'
import { writeFileSync } from 'node:fs'
import v8 from 'node:v8'
if ((process.argv[1] ?? '').endsWith('mirror-sidecar.js')) {
  const session = new Session()
  session.connect()
  session.post('HeapProfiler.startSampling', { samplingInterval: 32768 })
  const t0 = Date.now()
  let done = false
  const timer = setInterval(() => {
    if (done || Date.now() - t0 < 15_000) return
    const old = v8.getHeapSpaceStatistics().find(s => s.space_name === 'old_space')
    if (old.space_used_size < 230 * 2 ** 20) return
    done = true
    session.post('HeapProfiler.getSamplingProfile', (error, result) => {
      if (!error) writeFileSync(`/tmp/scale3-alloc-${process.pid}.heapprofile`, JSON.stringify(result.profile))
    })
  }, 500)
  timer.unref()
}
