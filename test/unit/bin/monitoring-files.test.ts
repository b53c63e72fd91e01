import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { alertRuleFile } from '../../../grafana/src/alerts.js'
import { repositoryDir } from '../../../grafana/src/build.js'
import { SIDECAR_BIN } from '../../helpers/sidecar.js'

function sidecar (args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null, stdout: string, stderr: string } {
  const run = spawnSync(process.execPath, [SIDECAR_BIN, ...args], { encoding: 'utf8', env: { ...process.env, MIRROR_RUNBOOK_URL_BASE: '', ...env } })
  return { status: run.status, stdout: run.stdout, stderr: run.stderr }
}

type RuleFile = { groups: Array<{ rules: Array<{ alert: string, annotations: { runbook_url: string } }> }> }
const urls = (text: string): string[] => (parse(text) as RuleFile).groups.flatMap(g => g.rules.map(r => r.annotations.runbook_url))

test('mirror-sidecar alerts prints the rule file with runbook_url on --runbook-url-base or MIRROR_RUNBOOK_URL_BASE; else the path in the package', () => {
  const rules = alertRuleFile().groups[0]!.rules
  const base = 'https://git.example.com/mirror/blob/main/docs/runbook.md'
  const flagged = sidecar(['alerts', '--runbook-url-base', base])
  assert.equal(flagged.status, 0, flagged.stderr)
  assert.deepEqual(urls(flagged.stdout), rules.map(rule => `${base}#${rule.alert.toLowerCase()}`))
  const fromEnv = sidecar(['alerts'], { MIRROR_RUNBOOK_URL_BASE: 'https://wiki.example.com/runbook' })
  assert.deepEqual(urls(fromEnv.stdout), rules.map(rule => `https://wiki.example.com/runbook#${rule.alert.toLowerCase()}`))
  const plain = sidecar(['alerts'])
  assert.equal(plain.stdout, readFileSync(join(repositoryDir(), 'grafana', 'alerts.yml'), 'utf8'))
  assert.deepEqual(urls(plain.stdout), rules.map(rule => `docs/runbook.md#${rule.alert.toLowerCase()}`))
})

test('mirror-sidecar grafana prints the dashboard; a base that is no http(s) address is one line, exit 2', () => {
  const dashboard = sidecar(['grafana'])
  assert.equal(dashboard.status, 0, dashboard.stderr)
  assert.equal(dashboard.stdout, readFileSync(join(repositoryDir(), 'grafana', 'kafka-mirror-sidecar.json'), 'utf8'))
  const bad = sidecar(['alerts'], { MIRROR_RUNBOOK_URL_BASE: 'docs/runbook.md' })
  assert.equal(bad.status, 2)
  assert.equal(bad.stdout, '')
  assert.match(bad.stderr, /^mirror-sidecar: MIRROR_RUNBOOK_URL_BASE "docs\/runbook.md": expected the http\(s\) address .*\n$/)
})

test('the npm package holds the files mirror-sidecar grafana and alerts print', () => {
  const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repositoryDir(), encoding: 'utf8' })
  const packed = JSON.parse(output) as Array<{ files: Array<{ path: string }> }>
  const files = new Set(packed[0]!.files.map(f => f.path))
  for (const path of ['grafana/kafka-mirror-sidecar.json', 'grafana/alerts.yml', 'docs/runbook.md', 'docs/metrics.md']) assert.ok(files.has(path), path)
})
