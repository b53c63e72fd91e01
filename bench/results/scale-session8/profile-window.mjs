// self time by function (and by inclusive "bucket" frames) within [from, to] seconds of a .cpuprofile
import { readFileSync } from 'node:fs'
const [file, from, to, top = 40] = process.argv.slice(2)
const p = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(p.nodes.map(n => [n.id, n]))
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
let t = 0; const self = new Map(); const incl = new Map(); let total = 0, idle = 0
const label = n => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, '')}:${n.callFrame.lineNumber + 1}`
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i]
  const s = t / 1e6
  if (s < Number(from) || s > Number(to)) continue
  const dt = (p.timeDeltas[i + 1] ?? 0) / 1000
  const n = byId.get(p.samples[i])
  if (n.callFrame.functionName === '(idle)') { idle += dt; continue }
  total += dt
  self.set(label(n), (self.get(label(n)) ?? 0) + dt)
  const seen = new Set()
  for (let id = n.id; id !== undefined; id = parent.get(id)) { const l = label(byId.get(id)); if (seen.has(l)) continue; seen.add(l); incl.set(l, (incl.get(l) ?? 0) + dt) }
}
const w = Number(to) - Number(from)
console.log(`window ${w}s busy ${total.toFixed(0)} ms = ${(total / w / 10).toFixed(1)} % of a core; idle ${idle.toFixed(0)} ms`)
console.log('--- self'); for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(v.toFixed(0).padStart(7), (v / w / 10).toFixed(2).padStart(6), k)
console.log('--- inclusive'); for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top * 2)) console.log(v.toFixed(0).padStart(7), (v / w / 10).toFixed(2).padStart(6), k)
