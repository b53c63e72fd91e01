// Experiment: the snap-D build with V8's allocation-site pretenuring off (set before any application code runs).
import v8 from 'node:v8'
v8.setFlagsFromString('--no-allocation-site-pretenuring')
await import('/tmp/s9/snap-D/dist/src/bin/mirror-sidecar.js')
