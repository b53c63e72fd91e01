import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../shared/errors.js'
import { packageDir } from '../shared/package-version.js'

/** `mirror-sidecar grafana` and `mirror-sidecar alerts`: the files of the package they print. */
export const MONITORING_FILES = {
  grafana: { path: 'grafana/kafka-mirror-sidecar.json', describe: 'Print the Grafana dashboard (JSON, with a datasource variable) and exit' },
  alerts: { path: 'grafana/alerts.yml', describe: 'Print the Prometheus alert rules (a rule file for rule_files) and exit' },
} as const
export type MonitoringFile = keyof typeof MONITORING_FILES

/** Where the shipped rule file's `runbook_url`s point: docs/runbook.md of the package, relative. */
const SHIPPED_RUNBOOK = 'docs/runbook.md'

/** `MIRROR_RUNBOOK_URL_BASE`: the default of `--runbook-url-base`. */
export const RUNBOOK_URL_BASE_ENV = 'MIRROR_RUNBOOK_URL_BASE'

/**
 * The dashboard or the alert rules as shipped in the package (`files` of package.json), the rules'
 * `runbook_url` set to `runbookUrlBase` + `#` + the alert's anchor when given: the address where
 * docs/runbook.md is published (a repository's page, a wiki). Without it each stays the page's
 * path in the package, `docs/runbook.md#<alert>`. A base that is not an http(s) URL is refused
 * naming the flag or variable.
 */
export function monitoringFile (file: MonitoringFile, runbookUrlBase: { value: string, key: string } | undefined): string {
  if (runbookUrlBase !== undefined && !/^https?:\/\/[^\s"\\]+$/.test(runbookUrlBase.value)) {
    const message = 'expected the http(s) address where docs/runbook.md is published, e.g. https://git.example.com/mirror/blob/main/docs/runbook.md'
    throw new ConfigError([{ key: runbookUrlBase.key, value: runbookUrlBase.value, message }])
  }
  const dir = packageDir()
  if (dir === undefined) throw new Error('package.json of kafka-mirror-sidecar not found above the program; reinstall the package')
  const text = readFileSync(join(dir, MONITORING_FILES[file].path), 'utf8')
  if (file !== 'alerts' || runbookUrlBase === undefined) return text
  const base = runbookUrlBase.value.replace(/#.*$/, '')
  return text.replaceAll(`runbook_url: "${SHIPPED_RUNBOOK}#`, `runbook_url: "${base}#`)
}
