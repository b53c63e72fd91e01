// An example message handler for mirror-sidecar (see docs/message-handler.md):
//
//   mirror-sidecar --consumer.config source.properties --producer.config target.properties \
//     --whitelist 'orders' --message.handler examples/message-handler/orders-handler.mjs \
//     --message.handler.args 'email,phone'
//
// For JSON order events it
//   - filters: drops records with the header x-test: true;
//   - rewrites: masks the fields named in --message.handler.args ("email,phone");
//   - re-keys: uses the event's customerId as the key (the record stays in its source partition);
//   - fans out: an event holding { "orders": [...] } becomes one record per order;
//   - adds a header: x-mirrored-from: <topic>/<partition>/<offset>, after the source's headers.
// Anything that is not JSON (and tombstones) is copied as it is.

/** The last value of header `name` as text, or undefined. */
function header (record, name) {
  const found = record.headers.filter(h => h.key === name).at(-1)
  return found?.value?.toString('utf8')
}

function masker (args) {
  const fields = new Set((args ?? '').split(',').map(field => field.trim()).filter(field => field !== ''))
  return event => Object.fromEntries(Object.entries(event).map(([name, value]) => [name, fields.has(name) ? '***' : value]))
}

export function handle (record, context) {
  if (header(record, 'x-test') === 'true') return null
  if (record.value === null) return record
  let event
  try {
    event = JSON.parse(record.value.toString('utf8'))
  } catch {
    return record
  }
  if (event === null || typeof event !== 'object') return record
  const mask = masker(context.args)
  const headers = [...record.headers, { key: 'x-mirrored-from', value: `${record.topic}/${record.partition}/${record.offset}` }]
  const keyOf = item => item.customerId === undefined ? record.key : String(item.customerId)
  if (Array.isArray(event.orders)) {
    return event.orders.map(order => ({ key: keyOf(order), value: JSON.stringify(mask(order)), headers }))
  }
  return { ...record, key: keyOf(event), value: JSON.stringify(mask(event)), headers }
}
