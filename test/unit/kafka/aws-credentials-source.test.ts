import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import type { AwsMskIamSettings } from '../../../src/config/cluster-connection.js'
import { AwsCredentialsSource } from '../../../src/kafka/aws-credentials-source.js'
import { MirrorError } from '../../../src/shared/errors.js'
import { createLogger, silentLogger } from '../../../src/shared/logger.js'

const SETTINGS: AwsMskIamSettings = { mechanism: 'aws_msk_iam', debugCreds: false, fallbackRegion: 'us-east-1', jaasKey: 'c.properties: sasl.jaas.config' }

/** Runs with only the AWS variables given (and never the instance metadata service), restoring the environment after. */
function awsEnvironment (t: TestContext, variables: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'aws-creds-'))
  const saved = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('AWS_')))
  for (const name of Object.keys(saved)) delete process.env[name]
  Object.assign(
    process.env,
    { AWS_CONFIG_FILE: join(dir, 'no-config'), AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'), AWS_EC2_METADATA_DISABLED: 'true' },
    variables
  )
  t.after(() => {
    for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name]
    Object.assign(process.env, saved)
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

test('the default chain takes the credentials of the environment', async t => {
  awsEnvironment(t, { AWS_ACCESS_KEY_ID: 'AKIDENV', AWS_SECRET_ACCESS_KEY: 'env-secret', AWS_SESSION_TOKEN: 'env-token' })
  const source = new AwsCredentialsSource(SETTINGS, silentLogger)
  const credentials = await source.credentials()
  assert.deepEqual([credentials.accessKeyId, credentials.secretAccessKey, credentials.sessionToken], ['AKIDENV', 'env-secret', 'env-token'])
  await source.credentials()
  assert.equal(source.fetched, 1, 'long-term credentials are kept')
})

test('the default chain reads the [default] profile of AWS_SHARED_CREDENTIALS_FILE; awsProfileName picks another', async t => {
  const dir = awsEnvironment(t, {})
  const file = join(dir, 'credentials')
  writeFileSync(
    file,
    '[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = default-secret\n\n[mirror]\naws_access_key_id = AKIDMIRROR\naws_secret_access_key = mirror-secret\naws_session_token = mirror-token\n'
  )
  process.env.AWS_SHARED_CREDENTIALS_FILE = file
  const chain = await new AwsCredentialsSource(SETTINGS, silentLogger).credentials()
  assert.deepEqual([chain.accessKeyId, chain.secretAccessKey], ['AKIDDEFAULT', 'default-secret'])
  const profile = await new AwsCredentialsSource({ ...SETTINGS, profileName: 'mirror' }, silentLogger).credentials()
  assert.deepEqual([profile.accessKeyId, profile.secretAccessKey, profile.sessionToken], ['AKIDMIRROR', 'mirror-secret', 'mirror-token'])
})

test('a missing profile is an authentication error naming the JAAS key; awsDebugCreds logs the key id, never the secret', async t => {
  const dir = awsEnvironment(t, {})
  const file = join(dir, 'credentials')
  writeFileSync(file, '[mirror]\naws_access_key_id = AKIDMIRROR\naws_secret_access_key = mirror-secret-9f2\naws_session_token = mirror-token-77a\n')
  process.env.AWS_SHARED_CREDENTIALS_FILE = file
  await assert.rejects(new AwsCredentialsSource({ ...SETTINGS, profileName: 'absent' }, silentLogger).credentials(), (error: MirrorError) => {
    assert.equal(error.code, 'MIRROR_AUTHENTICATION')
    assert.match(error.message, /^c\.properties: sasl\.jaas\.config: no AWS credentials for AWS_MSK_IAM \(profile absent\)/)
    return true
  })
  const lines: string[] = []
  const logger = createLogger({ level: 'info', write: (line: string) => { lines.push(line) } })
  await new AwsCredentialsSource({ ...SETTINGS, profileName: 'mirror', debugCreds: true }, logger).credentials()
  const output = lines.join('\n')
  assert.match(output, /AKIDMIRROR/)
  assert.doesNotMatch(output, /mirror-secret-9f2|mirror-token-77a/)
})

test('temporary credentials are fetched again 5 minutes before they expire, by one caller at a time', async () => {
  let nowMs = 0
  let calls = 0
  const provider = async () => {
    calls++
    return { accessKeyId: `AKID${calls}`, secretAccessKey: 's', sessionToken: 't', expiration: new Date(nowMs + 3_600_000) }
  }
  const source = new AwsCredentialsSource(SETTINGS, silentLogger, { provider, now: () => nowMs })
  const [a, b] = await Promise.all([source.credentials(), source.credentials()])
  assert.equal(a.accessKeyId, 'AKID1')
  assert.equal(b.accessKeyId, 'AKID1')
  nowMs = 3_600_000 - 300_001
  assert.equal((await source.credentials()).accessKeyId, 'AKID1')
  nowMs = 3_600_000 - 300_000
  assert.equal((await source.credentials()).accessKeyId, 'AKID2')
})
