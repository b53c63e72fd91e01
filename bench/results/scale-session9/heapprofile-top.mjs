// node heapprofile-top.mjs <file.heapprofile> [N]: self bytes by function (url:line) and by bottom-up stacks of 4 frames
import { readFileSync } from 'node:fs'
const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const n = Number(process.argv[3] ?? 30)
const bySelf = new Map(); const byStack = new Map(); let total = 0
const walk = (node, stack) => {
  const cf = node.callFrame
  const name = `${cf.functionName || '(anon)'} ${cf.url.replace(/.*node_modules\//, '').replace(/.*dist\//, '')}:${cf.lineNumber + 1}`
  const here = [name, ...stack]
  if (node.selfSize > 0) {
    total += node.selfSize
    bySelf.set(name, (bySelf.get(name) ?? 0) + node.selfSize)
    const key = here.slice(0, 5).join(' <- ')
    byStack.set(key, (byStack.get(key) ?? 0) + node.selfSize)
  }
  for (const child of node.children ?? []) walk(child, here)
}
walk(profile.head, [])
const mib = b => (b / 2 ** 20).toFixed(2).padStart(7)
console.log(`total ${mib(total)} MiB`)
for (const [k, v] of [...bySelf].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(mib(v), k)
console.log('\nstacks')
for (const [k, v] of [...byStack].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(mib(v), k)
