/**
 * The sidecar of this build with kafkajs' producer writing its at-least-once flows
 * (`MIRROR_TARGET_PRODUCER=kafkajs`): a `--baseline-entry` that compares the two target producers
 * in one run, the rest of the code the same.
 */
process.env.MIRROR_TARGET_PRODUCER = 'kafkajs'
await import('../src/bin/mirror-sidecar.js')
