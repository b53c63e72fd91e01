import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { run, type CommandResult } from './prometheus.js'

/** The repository root (this file runs from `dist/test/helpers/`). */
export const REPOSITORY = fileURLToPath(new URL('../../../', import.meta.url))
export const KUBERNETES_DIR = join(REPOSITORY, 'deploy', 'kubernetes')
export const SCHEMAS_DIR = join(KUBERNETES_DIR, 'schemas')

/** `NAME=value` lines of `scripts/deploy/tool-versions.sh`, the one place the versions are set. */
export function toolVersions (): Record<string, string> {
  const text = readFileSync(join(REPOSITORY, 'scripts', 'deploy', 'tool-versions.sh'), 'utf8')
  return Object.fromEntries([...text.matchAll(/^([A-Z_]+)=("[^"]*"|\S+)/gm)].map(match => [match[1] as string, (match[2] as string).replace(/^"|"$/g, '')]))
}

/** Path of a tool that `scripts/deploy/ensure-deploy-tools.sh` installed; fails with what to run when it is missing. */
export function deployTool (name: 'kubeconform' | 'kustomize' | 'hadolint' | 'helm'): string {
  const versions = toolVersions()
  const version = versions[`${name.toUpperCase()}_VERSION`]
  const path = join(REPOSITORY, '.cache', 'deploy-tools', `${name}@${version ?? '?'}`, name)
  if (!existsSync(path)) throw new Error(`${path} is missing: run bash scripts/deploy/ensure-deploy-tools.sh (npm test does)`)
  return path
}

/** Kubernetes versions the manifests are validated against (schemas vendored for each). */
export function kubernetesVersions (): string[] {
  return (toolVersions().KUBERNETES_VERSIONS ?? '').split(' ').filter(version => version !== '')
}

/** `kustomize build DIR`: the manifests as `kubectl apply -k DIR` would send them. */
export async function kustomizeBuild (dir: string): Promise<string> {
  const result = await run(deployTool('kustomize'), ['build', dir])
  if (result.code !== 0) throw new Error(`kustomize build ${dir} exited ${result.code}: ${result.stderr}`)
  return result.stdout
}

export interface KubeconformResource { readonly filename: string, readonly kind: string, readonly name: string, readonly status: string, readonly msg: string }

/**
 * kubeconform, strict (no property outside the schema, no duplicate key), offline: only the vendored
 * schemas, Kubernetes' own by version and the CRDs' by group; a kind without a schema is an error.
 * Reads the YAML from `stdin`, or the files given.
 */
export async function kubeconform (
  kubernetesVersion: string,
  input: { stdin: string } | { files: readonly string[] }
): Promise<{ result: CommandResult, resources: KubeconformResource[] }> {
  const args = [
    '-strict',
    '-summary',
    '-output',
    'json',
    '-verbose',
    '-kubernetes-version',
    kubernetesVersion,
    '-schema-location',
    join(SCHEMAS_DIR, '{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}', '{{ .ResourceKind }}{{ .KindSuffix }}.json'),
    '-schema-location',
    join(SCHEMAS_DIR, 'crds', '{{ .Group }}', '{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json'),
    ...('stdin' in input ? ['-'] : input.files),
  ]
  const result = await run(deployTool('kubeconform'), args, 'stdin' in input ? input.stdin : undefined)
  const parsed = JSON.parse(result.stdout === '' ? '{}' : result.stdout) as { resources?: KubeconformResource[] }
  return { result, resources: parsed.resources ?? [] }
}
