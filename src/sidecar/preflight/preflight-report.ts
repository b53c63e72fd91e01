import { stringify } from 'yaml'
import type { ClusterFindings, PreflightReport } from './preflight.js'
import type { AclResource, Operation, RequiredRight } from './required-rights.js'

/** `mirror-sidecar preflight --format`: a table with grant commands, the report as JSON, or Strimzi `KafkaUser` resources. */
export const PREFLIGHT_FORMATS = ['table', 'json', 'strimzi'] as const
export type PreflightFormat = (typeof PREFLIGHT_FORMATS)[number]

/** A name as one shell word: as it is when it holds only safe characters, else in single quotes. */
function shellWord (value: string): string {
  return /^[\w.,:/=@+-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`
}

const RESOURCE_FLAG: Record<AclResource['type'], string> = {
  topic: '--topic',
  group: '--group',
  cluster: '--cluster',
  'transactional-id': '--transactional-id',
}

/** The `kafka-acls` command that grants `right` to `principal` on the cluster at `brokers`. */
export function aclCommand (brokers: readonly string[], principal: string, right: RequiredRight): string {
  const { resource } = right
  const target = resource.type === 'cluster' ? '--cluster' : `${RESOURCE_FLAG[resource.type]} ${shellWord(resource.name)}`
  const pattern = resource.pattern === 'prefixed' ? ' --resource-pattern-type prefixed' : ''
  return `kafka-acls --bootstrap-server ${brokers.join(',')} --add --allow-principal ${shellWord(principal)} --operation ${right.operation} ${target}${pattern}`
}

function resourceText (resource: AclResource): string {
  if (resource.type === 'cluster') return 'cluster'
  return `${resource.type} ${resource.name}${resource.pattern === 'prefixed' ? '*' : ''}`
}

function table (rows: readonly string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map(row => row[column]!.length)))
  return rows.map(row => row.map((cell, column) => column === row.length - 1 ? cell : cell.padEnd(widths[column]!)).join('  ')).join('\n')
}

/**
 * The report for a person: per flow and cluster one line (principal, rights needed and missing,
 * topics the run will create), then one table of what is missing, each row with the command that
 * grants or sets it; `preflight: nothing missing` when all is there.
 */
export function renderPreflightTable (report: PreflightReport): string {
  const lines: string[] = []
  const missingRows: string[][] = [['CLUSTER', 'MISSING', 'NEEDED FOR', 'FIX']]
  for (const flow of report.flows) {
    lines.push(`flow ${flow.flow}`)
    for (const cluster of flow.clusters) {
      const create = cluster.toCreate.length === 0 ? '' : `; will create ${cluster.toCreate.join(', ')}`
      lines.push(`  ${cluster.role} ${cluster.alias} (${cluster.brokers.join(',')}) as ${cluster.principal}: ${cluster.rights.length} rights needed, ${cluster.missing.length} missing${create}`)
      for (const api of cluster.missingApis) {
        const served = api.servedMaxVersion === undefined ? 'not served' : `served up to v${api.servedMaxVersion}`
        missingRows.push([cluster.alias, `API ${api.name} v${api.minVersion}+ (${served})`, api.feature, 'a broker of a later Kafka release'])
      }
      for (const right of cluster.missing) {
        const grant = aclCommand(cluster.brokers, cluster.principal, right)
        missingRows.push([cluster.alias, `${right.operation} on ${resourceText(right.resource)}`, right.feature, grant])
      }
    }
    for (const setting of flow.settings) {
      missingRows.push([
        flow.clusters[1].alias,
        `${setting.key}=${setting.targetValue} on topic ${setting.targetTopic}`,
        `${setting.problem} (source ${setting.sourceTopic}: ${setting.sourceValue ?? 'default'})`,
        setting.fix,
      ])
    }
  }
  if (missingRows.length === 1) return `${lines.join('\n')}\npreflight: nothing missing`
  return `${lines.join('\n')}\n\n${table(missingRows)}\n\npreflight: ${missingRows.length - 1} missing`
}

/** The report as JSON: every right needed and the missing ones, each missing right with its `kafka-acls` command. */
function renderPreflightJson (report: PreflightReport): string {
  return JSON.stringify({
    flows: report.flows.map(flow => ({
      ...flow,
      clusters: flow.clusters.map(cluster => ({
        ...cluster,
        missing: cluster.missing.map(right => ({ ...right, grant: aclCommand(cluster.brokers, cluster.principal, right) })),
      })),
    })),
  }, null, 2)
}

const STRIMZI_RESOURCE_TYPE: Record<AclResource['type'], string> = { topic: 'topic', group: 'group', cluster: 'cluster', 'transactional-id': 'transactionalId' }

/**
 * One Strimzi `KafkaUser` per cluster (`strimzi.io/cluster` the cluster's alias), with every right
 * the run needs there, not only the missing ones: a `KafkaUser`'s ACLs replace the user's. Its
 * name is the principal's user name and its authentication SCRAM-SHA-512 (Strimzi makes the
 * password Secret); set `type: tls` for a user that connects with a client certificate.
 */
export function renderPreflightStrimzi (report: PreflightReport): string {
  const clusters = new Map<string, ClusterFindings & { all: RequiredRight[] }>()
  for (const flow of report.flows) {
    for (const cluster of flow.clusters) {
      const key = `${cluster.alias}\u0000${cluster.principal}`
      const known = clusters.get(key)
      if (known === undefined) clusters.set(key, { ...cluster, all: [...cluster.rights] })
      else known.all.push(...cluster.rights)
    }
  }
  return [...clusters.values()].map(cluster => {
    const byResource = new Map<string, { resource: AclResource, operations: Set<Operation> }>()
    for (const right of cluster.all) {
      const key = `${right.resource.type}\u0000${right.resource.pattern}\u0000${right.resource.name}`
      const entry = byResource.get(key) ?? { resource: right.resource, operations: new Set<Operation>() }
      entry.operations.add(right.operation)
      byResource.set(key, entry)
    }
    const acls = [...byResource.values()].map(({ resource, operations }) => ({
      resource: resource.type === 'cluster'
        ? { type: 'cluster' }
        : { type: STRIMZI_RESOURCE_TYPE[resource.type], name: resource.name, patternType: resource.pattern },
      operations: [...operations],
      host: '*',
    }))
    const user = cluster.principal.replace(/^User:/, '')
    return stringify({
      apiVersion: 'kafka.strimzi.io/v1beta2',
      kind: 'KafkaUser',
      metadata: { name: user, labels: { 'strimzi.io/cluster': cluster.alias } },
      spec: { authentication: { type: 'scram-sha-512' }, authorization: { type: 'simple', acls } },
    })
  }).join('---\n')
}

/** The report in `format`. */
export function renderPreflight (report: PreflightReport, format: PreflightFormat): string {
  if (format === 'json') return renderPreflightJson(report)
  return format === 'strimzi' ? renderPreflightStrimzi(report) : renderPreflightTable(report)
}
