import { readFileSync } from 'node:fs'
const snap = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const m = snap.snapshot.meta
const nf = m.node_fields.length
const types = m.node_types[0]
const iType = m.node_fields.indexOf('type'), iName = m.node_fields.indexOf('name'), iSize = m.node_fields.indexOf('self_size')
const nodes = snap.nodes, strings = snap.strings
const agg = new Map()
let total = 0
for (let i = 0; i < nodes.length; i += nf) {
  const t = types[nodes[i + iType]]
  let name = t === 'object' || t === 'closure' ? strings[nodes[i + iName]] : `(${t})`
  if (t === 'string' || t === 'concatenated string' || t === 'sliced string') name = '(string)'
  const s = nodes[i + iSize]
  total += s
  const a = agg.get(name) ?? { count: 0, size: 0 }
  a.count++; a.size += s
  agg.set(name, a)
}
console.log('total self MiB', (total / 2 ** 20).toFixed(1), 'nodes', nodes.length / nf)
for (const [name, a] of [...agg].sort((x, y) => y[1].size - x[1].size).slice(0, Number(process.argv[3] ?? 40))) console.log((a.size / 2 ** 20).toFixed(2).padStart(8), String(a.count).padStart(9), name.slice(0, 100))
