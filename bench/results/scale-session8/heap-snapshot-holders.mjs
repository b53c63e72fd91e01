import { readFileSync } from 'node:fs'
const snap = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const m = snap.snapshot.meta
const nf = m.node_fields.length, ef = m.edge_fields.length
const types = m.node_types[0], etypes = m.edge_types[0]
const iType = m.node_fields.indexOf('type'), iName = m.node_fields.indexOf('name'), iSize = m.node_fields.indexOf('self_size'), iEc = m.node_fields.indexOf('edge_count')
const eType = m.edge_fields.indexOf('type'), eName = m.edge_fields.indexOf('name_or_index'), eTo = m.edge_fields.indexOf('to_node')
const nodes = snap.nodes, edges = snap.edges, strings = snap.strings
const n = nodes.length / nf
const parentOf = new Int32Array(n).fill(-1), parentEdge = new Array(n)
let e = 0
const nameOf = i => { const t = types[nodes[i * nf + iType]]; return t === 'object' || t === 'closure' ? strings[nodes[i * nf + iName]] : `(${t})` }
for (let i = 0; i < n; i++) {
  const ec = nodes[i * nf + iEc]
  for (let k = 0; k < ec; k++, e += ef) {
    const to = edges[e + eTo] / nf
    const et = etypes[edges[e + eType]]
    if (et === 'weak' || et === 'shortcut') continue
    if (parentOf[to] === -1) { parentOf[to] = i; parentEdge[to] = et === 'element' || et === 'hidden' ? '[]' : strings[edges[e + eName]] }
  }
}
// attribute each node's size to the nearest ancestor chain label (3 levels)
const agg = new Map()
for (let i = 0; i < n; i++) {
  const nm = nameOf(i)
  if (!['Object', 'Array', '(array)', '(string)', '(bigint)', '(concatenated string)', '(sliced string)', 'Long', 'Map', '(number)'].includes(nm)) continue
  let label = [], cur = i
  for (let d = 0; d < 4 && cur >= 0; d++) { const p = parentOf[cur]; if (p < 0) break; label.push(`${nameOf(p)}.${parentEdge[cur]}`); cur = p }
  const key = nm + ' <- ' + label.join(' <- ')
  const a = agg.get(key) ?? { c: 0, s: 0 }; a.c++; a.s += nodes[i * nf + iSize]; agg.set(key, a)
}
for (const [k, a] of [...agg].sort((x, y) => y[1].s - x[1].s).slice(0, Number(process.argv[3] ?? 60))) console.log((a.s / 2 ** 20).toFixed(2).padStart(7), String(a.c).padStart(8), k.slice(0, 220))
