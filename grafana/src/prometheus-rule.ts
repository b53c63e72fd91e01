import { alertRuleFile } from './alerts.js'

/** Name of the PrometheusRule object in `deploy/kubernetes/monitoring/`. */
export const PROMETHEUS_RULE_NAME = 'kafka-mirror-alerts'

/**
 * The alert rules of `alerts.ts` as a Prometheus Operator `PrometheusRule` (monitoring.coreos.com/v1):
 * the same groups as `grafana/alerts.yml`, rule for rule, so the two cannot drift apart.
 */
export function prometheusRule (): object {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: PROMETHEUS_RULE_NAME,
      // role: alert-rules is what a Prometheus selects with ruleSelector: { matchLabels: { role: alert-rules } }.
      labels: { 'app.kubernetes.io/name': 'kafka-mirror', role: 'alert-rules' },
    },
    spec: alertRuleFile(),
  }
}
