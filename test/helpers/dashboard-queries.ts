import { buildDashboard } from '../../grafana/src/dashboard.js'

/** One PromQL query of a dashboard panel, with the row it sits under. */
export interface DashboardQuery {
  readonly row: string
  readonly panel: string
  readonly expr: string
}

interface Panel { type: string, title: string, targets?: Array<{ expr: string }> }
interface Variable { name: string, type: string, query?: unknown }
interface Dashboard { panels: Panel[], templating: { list: Variable[] } }

/** Every panel query of the generated dashboard, in panel order, each with the title of the row above it. */
export function dashboardQueries (): DashboardQuery[] {
  const dashboard = buildDashboard() as Dashboard
  const queries: DashboardQuery[] = []
  let row = ''
  for (const panel of dashboard.panels) {
    if (panel.type === 'row') row = panel.title
    for (const { expr } of panel.targets ?? []) queries.push({ row, panel: panel.title, expr })
  }
  return queries
}

/**
 * The template variables' `label_values(metric, label)` queries as the PromQL Grafana runs for
 * them (the series of `metric`, grouped by `label`).
 */
export function variableQueries (): Array<{ name: string, expr: string }> {
  const dashboard = buildDashboard() as Dashboard
  return dashboard.templating.list.filter(variable => variable.type === 'query').map(variable => {
    const query = (variable.query as { query: string }).query
    const match = /^label_values\((.+),\s*(\w+)\)$/.exec(query)
    if (match === null) throw new Error(`variable ${variable.name}: not label_values(metric, label): ${query}`)
    return { name: variable.name, expr: `count by (${match[2] as string}) (${match[1] as string})` }
  })
}

/**
 * A panel query as Grafana would send it with every variable on "All": `$job`, `$instance`,
 * `$flow`, `$topic` match anything; `$__rate_interval` and `$__range` get the given durations.
 */
export function concreteExpression (expr: string, durations: { rateInterval?: string, range?: string } = {}): string {
  return expr
    .replace(/\$__rate_interval/g, durations.rateInterval ?? '30s')
    .replace(/\$__range/g, durations.range ?? '5m')
    .replace(/\$(job|instance|flow|topic)\b/g, '.*')
}
