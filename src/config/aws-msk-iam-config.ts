import type { AwsMskIamSettings } from './cluster-connection.js'
import type { JaasEntry } from './jaas.js'
import type { Properties } from './java-properties.js'
import { parseBoolean, type ProblemList } from './values.js'

export const AWS_MSK_IAM_LOGIN_MODULE = 'software.amazon.msk.auth.iam.IAMLoginModule'
/** aws-msk-iam-auth's client callback handler: what the sidecar does itself. */
const AWS_MSK_IAM_CALLBACK_HANDLER = 'software.amazon.msk.auth.iam.IAMClientCallbackHandler'
/** The JAAS options of `IAMLoginModule` the sidecar reads. */
const AWS_MSK_IAM_OPTIONS = ['awsProfileName', 'awsRoleArn', 'awsRoleSessionName', 'awsStsRegion', 'awsDebugCreds'] as const

/** An AWS region name: `us-east-1`, `eu-central-2`, `us-gov-west-1`, `cn-north-1`. */
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d+$/

/**
 * The region of an MSK broker host name: `b-1.NAME.ID.c2.kafka.REGION.amazonaws.com`,
 * `boot-ID.c1.kafka-serverless.REGION.amazonaws.com` (and `.amazonaws.com.cn`); undefined for other hosts.
 */
export function regionOfHost (host: string): string | undefined {
  const match = /\.([a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?\.?$/i.exec(host.trim())
  return match?.[1]?.toLowerCase()
}

/** The signing region for one broker: its host name's, else the configured fallback. */
export function signingRegion (settings: Pick<AwsMskIamSettings, 'fallbackRegion'>, host: string): string | undefined {
  return regionOfHost(host) ?? settings.fallbackRegion
}

/**
 * The AWS_MSK_IAM settings of a Java client configuration: `sasl.jaas.config` with
 * `software.amazon.msk.auth.iam.IAMLoginModule required` and the options `awsProfileName`,
 * `awsRoleArn`, `awsRoleSessionName`, `awsStsRegion`, `awsDebugCreds`; any other option is a
 * problem (it would change which identity signs). `env` gives `AWS_REGION`/`AWS_DEFAULT_REGION`.
 */
export function awsMskIamFromProperties (
  properties: Properties,
  entry: JaasEntry,
  where: string,
  problems: ProblemList,
  env: NodeJS.ProcessEnv = process.env
): AwsMskIamSettings | undefined {
  const jaasKey = `${where}sasl.jaas.config`
  const handlerKey = `${where}sasl.client.callback.handler.class`
  const before = problems.problems.length
  if (entry.loginModule !== AWS_MSK_IAM_LOGIN_MODULE) {
    problems.add(jaasKey, undefined, `uses ${entry.loginModule}, which does not fit sasl.mechanism=AWS_MSK_IAM; use ${AWS_MSK_IAM_LOGIN_MODULE} required;`)
    return undefined
  }
  if (entry.controlFlag !== 'required') problems.add(jaasKey, undefined, `control flag "${entry.controlFlag}": write "required" after the login module`)
  const handler = properties.get('sasl.client.callback.handler.class')?.value
  if (handler !== undefined && handler.trim() !== AWS_MSK_IAM_CALLBACK_HANDLER) {
    problems.add(handlerKey, handler, `Java classes cannot be loaded here; use ${AWS_MSK_IAM_CALLBACK_HANDLER} or remove the key`)
  }
  for (const name of entry.options.keys()) {
    if (!(AWS_MSK_IAM_OPTIONS as readonly string[]).includes(name)) {
      problems.add(jaasKey, undefined, `has the option ${name}, which the sidecar does not support; use only ${AWS_MSK_IAM_OPTIONS.join(', ')}`)
    }
  }
  const option = (name: (typeof AWS_MSK_IAM_OPTIONS)[number]): string | undefined => {
    const value = entry.options.get(name)?.trim()
    if (value === '') problems.add(jaasKey, undefined, `option ${name} is empty; give a value or remove it`)
    return value === '' ? undefined : value
  }
  const profileName = option('awsProfileName')
  const roleArn = option('awsRoleArn')
  const roleSessionName = option('awsRoleSessionName')
  const stsRegion = option('awsStsRegion')?.toLowerCase()
  if (roleArn !== undefined && !/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/.test(roleArn)) {
    problems.add(jaasKey, undefined, `option awsRoleArn "${roleArn}" is not a role ARN; write awsRoleArn="arn:aws:iam::123456789012:role/NAME"`)
  }
  if (roleSessionName !== undefined && roleArn === undefined) {
    problems.add(jaasKey, undefined, 'option awsRoleSessionName has no awsRoleArn to go with; add awsRoleArn="arn:aws:iam::ACCOUNT:role/NAME" or remove it')
  }
  if (stsRegion !== undefined && !REGION.test(stsRegion)) {
    problems.add(jaasKey, undefined, `option awsStsRegion "${stsRegion}" is not an AWS region; write e.g. awsStsRegion="us-east-1"`)
  }
  const debugRaw = entry.options.get('awsDebugCreds')
  const debugCreds = debugRaw === undefined ? false : (parseBoolean(`${jaasKey} option awsDebugCreds`, debugRaw, problems) ?? false)
  const envRegion = [env.AWS_REGION, env.AWS_DEFAULT_REGION].map(value => value?.trim().toLowerCase()).find(value => value !== undefined && value !== '')
  if (envRegion !== undefined && !REGION.test(envRegion)) problems.add('AWS_REGION', envRegion, 'is not an AWS region; set it to e.g. us-east-1')
  if (problems.problems.length > before) return undefined
  const fallbackRegion = envRegion ?? stsRegion
  return {
    mechanism: 'aws_msk_iam',
    ...(profileName === undefined ? {} : { profileName }),
    ...(roleArn === undefined ? {} : { roleArn }),
    ...(roleSessionName === undefined ? {} : { roleSessionName }),
    ...(stsRegion === undefined ? {} : { stsRegion }),
    debugCreds,
    ...(fallbackRegion === undefined ? {} : { fallbackRegion }),
    jaasKey,
  }
}

/** One problem per bootstrap server whose signing region is unknown: no region in its host name, no `AWS_REGION`, no `awsStsRegion`. */
export function checkSigningRegions (settings: AwsMskIamSettings, brokers: readonly string[], bootstrapKey: string, problems: ProblemList): void {
  for (const broker of brokers) {
    const host = broker.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1')
    if (signingRegion(settings, host) === undefined) {
      problems.add(
        bootstrapKey,
        broker,
        `the host name names no AWS region (MSK brokers are b-N.CLUSTER.ID.kafka.REGION.amazonaws.com), so AWS_MSK_IAM cannot sign for it; set AWS_REGION or awsStsRegion="REGION" in ${settings.jaasKey}`
      )
    }
  }
}
