/**
 * The `handler` scenario's message handler (`--message.handler dist/bench/identity-handler.js`):
 * every record as it came, so the sidecar's decoding path (decode, hand over, re-encode) runs
 * without changing what is copied.
 */
export function handle<T> (record: T): T {
  return record
}
