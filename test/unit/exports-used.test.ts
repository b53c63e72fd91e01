import assert from 'node:assert/strict'
import { test } from 'node:test'
import { importsOf, readSource, sourceFiles } from '../helpers/source-imports.js'

/**
 * Exported values of the folders being rewritten that only their own file uses; empty this list
 * as they are cleaned up. Each entry is `file name`.
 */
const PENDING = new Set([
  'src/kafka/aws-credentials-source.ts awsCredentialsProvider',
  'src/kafka/aws-msk-iam-payload.ts AWS_MSK_IAM_SERVICE',
  'src/kafka/aws-msk-iam-payload.ts AWS_MSK_IAM_ACTION',
  'src/kafka/aws-msk-iam-payload.ts AWS_MSK_IAM_EXPIRES_SECONDS',
  'src/kafka/bucket-assigner.ts BUCKET_ASSIGNER_NAME',
  'src/kafka/bucket-assigner.ts encodeLaneAnnouncement',
  'src/kafka/bucket-assigner.ts decodeLaneAnnouncement',
  'src/kafka/bucket-assigner.ts groupLanes',
  'src/kafka/kafkajs-internals.ts KAFKAJS_VERSION',
  'src/kafka/oauth-token-source.ts jwtClaims',
  'src/kafka/record-batch-header.ts BATCH_PREFIX_BYTES',
  'src/kafka/record-sink.ts PRODUCER_STATE_LOST',
  'src/kafka/split-records.ts RECORD_OVERHEAD_BYTES',
  'src/pipeline/forwarded-batch.ts DeepPathReasons',
  'src/pipeline/mirror-batch.ts encodedRecordBytes',
  'src/pipeline/offset-committer.ts COMMIT_FAILURES_BEFORE_ERROR',
  'src/pipeline/producer-worker.ts DEFAULT_MAX_MESSAGE_BYTES',
  'src/pipeline/producer-worker.ts requestsWithin',
  'src/pipeline/topic-sync.ts targetAcl',
])

const EXPORTED_VALUE = /^export\s+(?:async\s+)?(?:abstract\s+)?(?:function\*?|const|let|class)\s+(\w+)/gm

test('every function, class and constant src/ exports is imported by another file (src, tests, bench, scripts, grafana)', () => {
  const imported = new Map<string, Set<string>>()
  for (const file of ['src', 'test', 'bench', 'scripts', 'grafana/src'].flatMap(sourceFiles)) {
    for (const { file: target, names } of importsOf(file, readSource(file))) {
      const names_ = imported.get(target) ?? new Set<string>()
      for (const name of names) names_.add(name)
      imported.set(target, names_)
    }
  }
  const unused = sourceFiles('src').flatMap(file => [...readSource(file).matchAll(EXPORTED_VALUE)]
    .map(match => match[1]!)
    .filter(name => !imported.get(file)?.has(name) && !imported.get(file)?.has('*'))
    .map(name => `${file} ${name}`))
    .filter(entry => !PENDING.has(entry))
  assert.deepEqual(unused, [], 'exported but imported by no other file: stop exporting it, or delete it when its own file does not use it either')
})
