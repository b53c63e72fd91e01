import type { TestContext } from 'node:test'

/**
 * AWS credentials in the environment for one test, as the AWS SDK's default chain reads them (instance metadata
 * off); every `AWS_*` variable the process had is put back when the test ends.
 */
export function withAwsEnvCredentials (t: TestContext, credentials: { accessKeyId: string, secretAccessKey: string, sessionToken: string }): void {
  const saved = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('AWS_')))
  for (const name of Object.keys(saved)) delete process.env[name]
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_SESSION_TOKEN: credentials.sessionToken,
    AWS_EC2_METADATA_DISABLED: 'true',
  })
  t.after(() => {
    for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name]
    Object.assign(process.env, saved)
  })
}
