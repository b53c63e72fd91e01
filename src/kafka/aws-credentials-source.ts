import { createRequire } from 'node:module'
import type { AwsMskIamSettings } from '../config/cluster-connection.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import type { AwsCredentials } from './aws-msk-iam-payload.js'

type CredentialProviders = typeof import('@aws-sdk/credential-providers')
let credentialProviders: CredentialProviders | undefined
/** The AWS SDK's providers, loaded for the first AWS_MSK_IAM connection: loading them costs every start some 30 ms of CPU. */
function providers (): CredentialProviders {
  credentialProviders ??= createRequire(import.meta.url)('@aws-sdk/credential-providers') as CredentialProviders
  return credentialProviders
}

/** Something that gives AWS credentials (the AWS SDK's providers have this shape). */
export type AwsCredentialsProvider = () => Promise<AwsCredentials>

/** Temporary credentials are fetched again this long before they expire, so a payload never carries nearly expired ones. */
const REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000

/**
 * The AWS SDK provider that `settings` name, as aws-msk-iam-auth chooses: `awsRoleArn` assumes
 * that role through STS (in `awsStsRegion`, with the credentials of `awsProfileName` or of the
 * default chain); else `awsProfileName` reads that profile of the shared files
 * (`AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`); else the default chain (environment,
 * shared files, SSO, web identity, process, container and instance metadata).
 */
function awsCredentialsProvider (settings: AwsMskIamSettings, nowMs: () => number = Date.now): AwsCredentialsProvider {
  const { fromIni, fromNodeProviderChain, fromTemporaryCredentials } = providers()
  const base = settings.profileName === undefined ? fromNodeProviderChain() : fromIni({ profile: settings.profileName })
  if (settings.roleArn === undefined) return base
  return fromTemporaryCredentials({
    masterCredentials: base,
    params: { RoleArn: settings.roleArn, RoleSessionName: settings.roleSessionName ?? `kafka-mirror-sidecar-${nowMs()}` },
    ...(settings.stsRegion === undefined ? {} : { clientConfig: { region: settings.stsRegion } }),
  })
}

/**
 * Credentials for one AWS_MSK_IAM connection, shared by its clients: fetched at the first
 * authentication, kept until 5 minutes before they expire (long-term keys are kept), fetched by
 * one caller at a time. A failure is an authentication error naming the JAAS key; kafkajs retries
 * the connection. With `awsDebugCreds` each fetch logs the access key id, never the secret.
 */
export class AwsCredentialsSource {
  readonly #settings: AwsMskIamSettings
  readonly #provider: AwsCredentialsProvider
  readonly #logger: Logger
  readonly #now: () => number
  #current: AwsCredentials | undefined
  #fetching: Promise<AwsCredentials> | undefined
  /** Credentials fetched so far. */
  fetched = 0

  constructor (settings: AwsMskIamSettings, logger: Logger, options: { provider?: AwsCredentialsProvider, now?: () => number } = {}) {
    this.#settings = settings
    this.#logger = logger
    this.#now = options.now ?? Date.now
    this.#provider = options.provider ?? awsCredentialsProvider(settings, this.#now)
  }

  async credentials (): Promise<AwsCredentials> {
    const current = this.#current
    if (current !== undefined && (current.expiration === undefined || current.expiration.getTime() - this.#now() > REFRESH_BEFORE_EXPIRY_MS)) return current
    this.#fetching ??= this.#fetch().finally(() => { this.#fetching = undefined })
    return await this.#fetching
  }

  async #fetch (): Promise<AwsCredentials> {
    let credentials: AwsCredentials
    try {
      credentials = await this.#provider()
    } catch (error) {
      // The SDK's messages name the provider that failed and never hold a secret.
      throw new MirrorError(
        ErrorCodes.AUTHENTICATION,
        `${this.#settings.jaasKey}: no AWS credentials for AWS_MSK_IAM (${this.#source()}): ${(error as Error).message}`,
        { cause: error }
      )
    }
    this.#current = credentials
    this.fetched++
    if (this.#settings.debugCreds) {
      this.#logger.info('AWS_MSK_IAM credentials fetched', {
        source: this.#source(),
        accessKeyId: credentials.accessKeyId,
        temporary: credentials.sessionToken !== undefined,
        ...(credentials.expiration === undefined ? {} : { expiresAt: credentials.expiration.toISOString() }),
      })
    }
    return credentials
  }

  #source (): string {
    const { profileName, roleArn } = this.#settings
    const base = profileName === undefined ? 'the default credential chain' : `profile ${profileName}`
    return roleArn === undefined ? base : `role ${roleArn} assumed with ${base}`
  }
}
