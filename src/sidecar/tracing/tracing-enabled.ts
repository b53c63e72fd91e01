/**
 * Whether the sidecar exports traces, decided from the standard OTEL_* variables only:
 * off when `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER` lists `none`; on when
 * `OTEL_TRACES_EXPORTER` names an exporter or an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set; off otherwise, so an unconfigured sidecar does not
 * send to (and log failures about) a default `localhost:4318` nobody listens on.
 */
export function tracingEnabled (env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map(name => name.trim().toLowerCase()).filter(name => name !== '')
  if (exporters.includes('none')) return false
  if (exporters.length > 0) return true
  return nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) || nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
}

function nonEmpty (value: string | undefined): boolean {
  return value !== undefined && value.trim() !== ''
}

/** Whether the environment already names the service (then the sidecar's default name is not applied). */
export function serviceNameConfigured (env: NodeJS.ProcessEnv): boolean {
  if (nonEmpty(env.OTEL_SERVICE_NAME)) return true
  return (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',').some(pair => pair.trim().startsWith('service.name='))
}
