/** URLs inside a text: a scheme, `://`, and everything up to white space or a quote. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>]+/gi

/**
 * A URL as any output may show it (`--print-config`, logs, errors, metrics): scheme, host and path.
 * User-info, query and fragment are dropped, as they can carry a password, an API key or a signed
 * token (`https://user:pw@idp/token?api_key=...`). A URL with none of them is returned unchanged;
 * a text that is not a URL loses what would be user-info (up to an `@`) and everything from `?` or `#`.
 */
export function redactUrl (url: string): string {
  const asText = (): string => url.replace(/^([^@/?#]*\/\/)?[^@/?#]*@/, '$1').replace(/[?#].*$/s, '')
  let parsed: URL
  try {
    parsed = new URL(url.trim())
  } catch {
    return asText()
  }
  // `user:pw@host/path` parses as the scheme `user:` with an opaque path: not a URL a client could use.
  if (parsed.host === '' && parsed.protocol !== 'file:') return asText()
  if (parsed.username === '' && parsed.password === '' && parsed.search === '' && parsed.hash === '') return url
  parsed.username = ''
  parsed.password = ''
  parsed.search = ''
  parsed.hash = ''
  return parsed.href
}

/** `text` with every URL in it shown as `redactUrl` shows it (an error message, a log line). */
export function redactUrlsIn (text: string): string {
  return text.replace(URL_IN_TEXT, url => redactUrl(url))
}
