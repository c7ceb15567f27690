// Fails the build when the page's first load is over its budget: the bytes,
// gzipped, of dist/index.html and of every asset it references (the entry
// script, its modulepreload chunks, the stylesheet). Chunks loaded later by
// dynamic import (the Markdown renderer, the code highlighter) are listed but
// not counted. Usage: node scripts/check-size.mjs [budgetBytes]; the budget
// defaults to 150 kB (150 000 bytes) gzipped.
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

const dist = new URL('../dist/', import.meta.url).pathname
const budget = Number(process.argv[2] ?? 150_000)
const gz = (buf) => gzipSync(buf, { level: 9 }).length
const html = readFileSync(join(dist, 'index.html'))
const refs = [...html.toString().matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1])
const first = new Set(refs)
let total = gz(html)
const rows = [['index.html', gz(html), true]]
for (const f of refs) {
  const n = gz(readFileSync(join(dist, f)))
  total += n
  rows.push([f, n, true])
}
for (const f of readdirSync(join(dist, 'assets'))) {
  if (!first.has(`assets/${f}`)) rows.push([`assets/${f}`, gz(readFileSync(join(dist, 'assets', f))), false])
}
for (const [f, n, counted] of rows) console.log(`${counted ? 'first load' : 'lazy      '}  ${(n / 1000).toFixed(1).padStart(7)} kB gz  ${f}`)
console.log(`first load: ${(total / 1000).toFixed(1)} kB gzipped (budget ${(budget / 1000).toFixed(0)} kB)`)
if (total > budget) {
  console.error(`check-size: the first load is ${total} bytes gzipped, over the budget of ${budget}`)
  process.exit(1)
}
