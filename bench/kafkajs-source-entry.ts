/**
 * The sidecar of this build with kafkajs' consumers reading its at-least-once flows' sources
 * (`MIRROR_SOURCE_CONSUMER=kafkajs`): a `--baseline-entry` that compares the two source consumers
 * in one run (`MIRROR_SOURCE_CONSUMER=wire npm run bench -- ... --baseline-entry
 * dist/bench/kafkajs-source-entry.js`), the rest of the code the same.
 */
process.env.MIRROR_SOURCE_CONSUMER = 'kafkajs'
await import('../src/bin/mirror-sidecar.js')
