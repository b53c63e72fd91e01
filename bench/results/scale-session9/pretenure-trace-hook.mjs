// Preloaded via NODE_OPTIONS=--import; only in the sidecars: V8 prints each GC and each allocation site it decides to pretenure.
import v8 from 'node:v8'
if ((process.argv[1] ?? '').endsWith('mirror-sidecar.js')) {
  v8.setFlagsFromString('--trace-gc')
  v8.setFlagsFromString('--trace-gc-verbose')
  v8.setFlagsFromString('--trace-pretenuring')
}
