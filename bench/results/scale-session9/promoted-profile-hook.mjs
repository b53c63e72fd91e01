// Preloaded via NODE_OPTIONS=--import; only in the sidecars. From 25 s after start (the copy is done by then), samples
// allocations and keeps the samples of objects a major GC collected (includeObjectsCollectedByMajorGC) but drops those a
// scavenge collected: at 55 s the profile holds what was allocated since 25 s and survived the young generation (live,
// or old-generation garbage). Written to /tmp/s9/promoted-<pid>.heapprofile.
import { Session } from 'node:inspector'
import { writeFileSync } from 'node:fs'
if ((process.argv[1] ?? '').endsWith('mirror-sidecar.js')) {
  const session = new Session()
  session.connect()
  const start = setTimeout(() => {
    session.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false }, error => { if (error) console.error('sampling', error) })
  }, 25_000)
  const stop = setTimeout(() => {
    session.post('HeapProfiler.getSamplingProfile', (error, result) => {
      if (error) console.error('profile', error)
      else writeFileSync(`/tmp/s9/promoted-${process.pid}.heapprofile`, JSON.stringify(result.profile))
    })
  }, 55_000)
  start.unref(); stop.unref()
}
