// Preloaded via NODE_OPTIONS=--import; acts only in the sidecars (argv[1] ends with mirror-sidecar.js): V8 prints each GC and, after each full GC, the heap growing factor it chose and why.
import v8 from 'node:v8'
if ((process.argv[1] ?? '').endsWith('mirror-sidecar.js')) {
  v8.setFlagsFromString('--trace-gc')
  v8.setFlagsFromString('--trace-gc-verbose')
}
