import type { ClusterConnection } from '../../config/cluster-connection.js'
import type { FlowConfig, MirrorConfig } from '../../config/mirror-config.js'
import { targetTopicName } from '../../config/mirror-config.js'
import type { AclOperationName } from '../../kafka/authorized-operations.js'
import { RightsProbe } from '../../kafka/rights-probe.js'
import type { Logger } from '../../shared/logger.js'
import { requiredApis, type MissingApi } from './required-apis.js'
import { copiedTopics, requiredRights, type ClusterRights, type RequiredRight } from './required-rights.js'
import { settingProblems, SETTING_KEYS, type SettingProblem } from './topic-settings.js'

/** What the preflight found on one cluster of one flow. */
export interface ClusterFindings {
  readonly role: 'source' | 'target'
  readonly alias: string
  readonly brokers: readonly string[]
  /** The principal the grants name: `User:<SASL user name>`, `--principal`, else a placeholder. */
  readonly principal: string
  /** Every right the run needs there (a Strimzi `KafkaUser` lists them all: its ACLs replace the user's). */
  readonly rights: readonly RequiredRight[]
  readonly missing: readonly RequiredRight[]
  readonly missingApis: readonly MissingApi[]
  /** Topics the run will create there (mirrored topics and its internal topics). */
  readonly toCreate: readonly string[]
}

export interface FlowFindings {
  readonly flow: string
  readonly clusters: readonly [ClusterFindings, ClusterFindings]
  /** Existing target topics whose settings will refuse or change the copy. */
  readonly settings: readonly SettingProblem[]
}

export interface PreflightReport {
  readonly flows: readonly FlowFindings[]
}

/** Whether anything the run needs is missing: exit code 1 of `mirror-sidecar preflight`. */
export function somethingMissing (report: PreflightReport): boolean {
  return report.flows.some(f => f.settings.length > 0 || f.clusters.some(c => c.missing.length > 0 || c.missingApis.length > 0))
}

/** The principal a cluster's grants name: its SASL user (PLAIN, SCRAM), else `fallback`. */
function principalOf (connection: ClusterConnection, fallback: string | undefined): string {
  if (fallback !== undefined) return fallback
  const sasl = connection.sasl
  if (sasl !== undefined && 'username' in sasl) return `User:${sasl.username}`
  return 'User:<the mirror\'s principal>'
}

/**
 * Connects to both clusters of every flow and checks, without changing anything, what the run
 * will need: the APIs of the brokers, the principal's rights (`RightsProbe`: KIP-430's authorized
 * operations, CreateTopics validate-only, FindCoordinator of a transactional id), and the settings
 * of target topics that exist already. Each cluster is connected once for all flows.
 */
export async function runPreflight (config: MirrorConfig, logger: Logger, options: { principal?: string } = {}): Promise<PreflightReport> {
  const probes = new Map<string, Promise<RightsProbe>>()
  const probeOf = (connection: ClusterConnection): Promise<RightsProbe> => {
    const key = `${connection.alias}\u0000${connection.brokers.join(',')}`
    let probe = probes.get(key)
    if (probe === undefined) {
      const started = new RightsProbe(connection, logger)
      probe = started.start().then(() => started)
      probes.set(key, probe)
    }
    return probe
  }
  try {
    const flows: FlowFindings[] = []
    for (const flow of config.flows) flows.push(await checkFlow(flow, await probeOf(flow.source), await probeOf(flow.target), options.principal))
    return { flows }
  } finally {
    for (const probe of probes.values()) {
      await probe.then(async p => { await p.stop() }, () => {
        // This probe never connected: the failure is what runPreflight throws, nothing to stop.
      })
    }
  }
}

async function checkFlow (flow: FlowConfig, source: RightsProbe, target: RightsProbe, principal: string | undefined): Promise<FlowFindings> {
  const topics = { source: await source.topics(), target: await target.topics() }
  const needs = requiredRights(flow, topics)
  const apis = requiredApis(flow)
  const sourceFindings = await checkCluster('source', flow.source, source, needs.source, apis.source, principal)
  const targetFindings = await checkCluster('target', flow.target, target, needs.target, apis.target, principal)
  const existingTarget = new Set(topics.target)
  const pairs = copiedTopics(flow, topics.source)
    .map(name => ({ source: name, target: targetTopicName(flow.replicationPolicy, flow.source.alias, name) }))
    .filter(pair => existingTarget.has(pair.target))
  const sourceSettings = await source.topicSettings(pairs.map(p => p.source), SETTING_KEYS)
  const targetSettings = await target.topicSettings(pairs.map(p => p.target), SETTING_KEYS)
  const settings = pairs.flatMap(pair => settingProblems(pair, sourceSettings.get(pair.source), targetSettings.get(pair.target), flow.target))
  return { flow: flow.name, clusters: [sourceFindings, targetFindings], settings }
}

async function checkCluster (
  role: 'source' | 'target',
  connection: ClusterConnection,
  probe: RightsProbe,
  needs: ClusterRights,
  apis: ReadonlyMap<number, { name: string, minVersion: number, feature: string }>,
  principal: string | undefined
): Promise<ClusterFindings> {
  const versions = await probe.apiVersions()
  const missingApis: MissingApi[] = []
  for (const [key, api] of apis) {
    const served = versions.get(key)
    if (served === undefined || served.maxVersion < api.minVersion) missingApis.push({ ...api, apiKey: key, servedMaxVersion: served?.maxVersion })
  }
  const findings = {
    role,
    alias: connection.alias,
    brokers: connection.brokers,
    principal: principalOf(connection, principal),
    rights: needs.rights,
    toCreate: needs.toCreate,
  }
  // Without Metadata v8 (before Kafka 2.3) the broker cannot say what the principal may do: the APIs are what is missing.
  if (missingApis.some(api => api.apiKey === 3)) return { ...findings, missing: [], missingApis }

  const topicNames = [...new Set(needs.rights.filter(r => r.resource.type === 'topic').map(r => r.resource.name))]
  const authorized = await probe.authorizedOperations(topicNames)
  const groups = new Map<string, ReadonlySet<AclOperationName>>()
  const transactional = new Map<string, boolean>()
  const missing: RequiredRight[] = []
  for (const right of needs.rights) {
    const { resource, operation } = right
    let granted: boolean
    if (resource.type === 'cluster') {
      granted = authorized.cluster.has(operation)
    } else if (resource.type === 'topic') {
      granted = authorized.topics.get(resource.name)?.operations.has(operation) === true
      // Create may be granted on the cluster or by a prefix the topic's own answer does not show: the broker's validate-only CreateTopics decides.
      if (!granted && operation === 'Create') granted = authorized.cluster.has('Create') || await probe.mayCreateTopic(resource.name)
    } else if (resource.type === 'group') {
      if (!groups.has(resource.name)) groups.set(resource.name, (await probe.groupOperations(resource.name)).operations)
      granted = groups.get(resource.name)!.has(operation)
    } else {
      // Transactional ids: only Describe can be checked without side effects (see RightsProbe.mayDescribeTransactionalId).
      const id = `${resource.name}0`
      if (!transactional.has(id)) transactional.set(id, await probe.mayDescribeTransactionalId(id))
      granted = transactional.get(id)!
    }
    if (!granted) missing.push(right)
  }
  return { ...findings, missing, missingApis }
}
