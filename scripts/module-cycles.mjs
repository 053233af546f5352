#!/usr/bin/env node
// Module-level cycles in each crate's `use` graph, one node per module file: the binding (src/)
// and the engine (crates/engine/src/). Crates cannot import each other both ways, so each crate
// is its own graph.
//   node scripts/module-cycles.mjs                cycles; exit 1 on one not in the allowlist
//   node scripts/module-cycles.mjs --src DIR      one crate only (its lib.rs under DIR)
//   node scripts/module-cycles.mjs --write-allow  record today's cycles in the allowlist
//   node scripts/module-cycles.mjs --through      informational: a name a module only imports
//                                                 counts for the module defining it (no gate)
// Modules are found from src/lib.rs through `mod x;` (honouring `#[path]`). Edges: `use` trees
// (`pub use`, groups, globs, `as`) and paths in code (`crate::a::f()`, `super::x::Y`, `child::Z`,
// `m::Item` for a module `m` brought in by `use`), each resolved to the longest prefix that is a
// module; a path followed by `(` or `!` ends in a fn or macro. `mod child;` alone is no edge.
// Inline `mod x { }` blocks are no nodes (their uses count for their file; `super` in them
// resolves from the inline module). Test-only code is out of the gated result: files tests.rs,
// tests_*.rs or under tests/, modules declared `#[cfg(test)]`, items marked `#[cfg(test)]`.
// Not seen: methods (an `impl T` in another file), macros used without a path, doc links.
// Allowlist: a cycle a line, members sorted, joined by " "; `#` comments. A cycle within one
// allowed line passes (one that shrank or split is no news; --write-allow tightens the list).
import { readFileSync, writeFileSync, existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { dirname, join, relative, basename } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const CRATES = ['src', 'crates/engine/src']
const srcAt = process.argv.indexOf('--src')
if (srcAt < 0) {
  // Each crate in turn, by this script; the allowlist is shared (module paths name their crate).
  let failed = 0
  for (const dir of CRATES) {
    console.log(`\n== ${dir}`)
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...process.argv.slice(2), '--src', dir], { stdio: 'inherit' })
    if (r.status !== 0) failed++
  }
  process.exit(failed ? 1 : 0)
}
const srcDir = join(root, process.argv[srcAt + 1])
const allowPath = join(root, 'scripts', 'module-cycles.allow')
const writeAllow = process.argv.includes('--write-allow')
const through = process.argv.includes('--through')
if (through && writeAllow) throw new Error('--write-allow records the plain view, not --through')

// Blanks comments, string and char literals (same length, newlines kept) so offsets still match.
function strip(src) {
  const out = src.split('')
  const blank = (a, b) => { for (let k = a; k < b; k++) if (out[k] !== '\n') out[k] = ' ' }
  let i = 0
  while (i < src.length) {
    const c = src[i], n = src[i + 1]
    if (c === '/' && n === '/') { const e = src.indexOf('\n', i); blank(i, (i = e < 0 ? src.length : e)) } else if (c === '/' && n === '*') {
      let depth = 1, j = i + 2
      for (; j < src.length && depth; j++) if (src.startsWith('/*', j)) { depth++; j++ } else if (src.startsWith('*/', j)) { depth--; j++ }
      blank(i, (i = j))
    } else if (/[rb]/.test(c) && !/\w/.test(src[i - 1] ?? '') && /^(b?r#*"|b")/.test(src.slice(i, i + 40))) {
      const m = /^b?r(#*)"/.exec(src.slice(i, i + 40))
      if (!m) { i++; continue } // b"…": the quote is handled next round
      const e = src.indexOf('"' + m[1], i + m[0].length)
      blank(i, (i = e < 0 ? src.length : e + 1 + m[1].length))
    } else if (c === '"') {
      let j = i + 1
      while (j < src.length && src[j] !== '"') j += src[j] === '\\' ? 2 : 1
      blank(i, (i = j + 1))
    } else if (c === "'") {
      const m = /^'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'/.exec(src.slice(i, i + 12))
      if (m) { blank(i, i + m[0].length); i += m[0].length } else i++ // a lifetime
    } else i++
  }
  return out.join('')
}

// End of the item starting at `from`: its `;`, or the `}` matching its first `{`.
function itemEnd(s, from) {
  let paren = 0
  for (let i = from; i < s.length; i++) {
    const c = s[i]
    if (c === '(' || c === '[') paren++
    else if (c === ')' || c === ']') paren--
    else if (c === ';' && paren === 0) return i + 1
    else if (c === '{' && paren === 0) {
      for (let j = i, depth = 0; j < s.length; j++) if (s[j] === '{') depth++; else if (s[j] === '}' && --depth === 0) return j + 1
      return s.length
    }
  }
  return s.length
}

const CFG_TEST = /#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]/
const isTestName = (file) => /^tests(_\w+)?\.rs$/.test(basename(file)) || file.split('/').includes('tests')

// The module tree: key "a::b" ('' is the crate root) -> { file, text, test }.
const modules = new Map()
function walk(file, path, test, childDir) {
  const raw = readFileSync(file, 'utf8'), text = strip(raw), key = path.join('::'), rel = relative(root, file)
  modules.set(key, { key, path, file: rel, text, test: test || isTestName(rel) })
  for (const m of text.matchAll(/((?:#\s*\[[^\]]*\]\s*)*)(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(\w+)\s*;/g)) {
    if (insideInline(text, m.index)) continue
    const attrs = raw.slice(m.index, m.index + m[1].length)
    const explicit = /#\s*\[\s*path\s*=\s*"([^"]+)"/.exec(attrs)
    const name = m[2]
    let child = explicit ? join(dirname(file), explicit[1]) : join(childDir, name + '.rs')
    if (!explicit && !existsSync(child)) child = join(childDir, name, 'mod.rs')
    if (!existsSync(child)) { console.error(`module-cycles: no file for mod ${name} in ${rel}`); continue }
    const own = basename(child) === 'mod.rs' ? dirname(child) : join(dirname(child), basename(child, '.rs'))
    walk(child, [...path, name], test || CFG_TEST.test(attrs), own)
  }
}
// Inline `mod x { … }` blocks of a stripped text: [start, end, name].
const inlineCache = new Map()
const inlineMods = (text) => inlineCache.get(text) ??
  inlineCache.set(text, [...text.matchAll(/\bmod\s+(\w+)\s*\{/g)].map((m) => [m.index, itemEnd(text, m.index), m[1]])).get(text)
const insideInline = (text, at) => inlineMods(text).some(([a, b]) => a < at && at < b)
walk(join(srcDir, 'lib.rs'), [], false, srcDir)

// Resolves path segments seen in `mod` (scope = its path plus inline modules around the path)
// to { to: module key, name, full } or null (std, other crates, local names).
function resolve(segs, scope, aliases, items = 0) {
  let base, i = 1
  if (segs[0] === 'crate') base = []
  else if (segs[0] === 'self') base = scope
  else if (segs[0] === 'super') { base = scope.slice(0, -1); while (segs[i] === 'super') { base = base.slice(0, -1); i++ } }
  else if (aliases.has(segs[0])) base = aliases.get(segs[0])
  else if (modules.has([...scope, segs[0]].join('::'))) { base = scope; i = 0 }
  else return null
  return longest([...base, ...segs.slice(i)], items)
}
// The longest prefix of `full` that is a module (`items` trailing segments are no module).
function longest(full, items) {
  for (let n = full.length - items, key; n >= 0; n--)
    if (modules.has((key = full.slice(0, n).join('::')))) return { to: key, name: full[n] ?? null, full, items }
  return null
}
// --through: a name a module only imports (`use`, `pub use`) leads on to where it is defined.
function follow(hit, from) {
  for (let hops = 0; hops < 9 && hit.name; hops++) {
    const { imports, aliases, path } = modules.get(hit.to)
    const next = imports.get(hit.name) ??
      (aliases.has(hit.name) && longest([...aliases.get(hit.name), ...hit.full.slice(path.length + 1)], hit.items))
    if (!next || next.to === from) break
    hit = next
  }
  return hit
}

// A `use` tree's leaves: { segs, alias, glob }.
function useLeaves(body) {
  const toks = body.match(/::|[{},*]|[A-Za-z_]\w*/g) ?? [], out = []
  let p = 0
  const tree = (prefix) => {
    const segs = [...prefix]
    while (p < toks.length) {
      const t = toks[p++]
      if (t === '::') continue
      if (t === '{') { while (p < toks.length && toks[p] !== '}') { tree(segs); if (toks[p] === ',') p++ } p++; return }
      if (t === '*') { out.push({ segs, glob: true }); return }
      segs.push(t)
      if (toks[p] === '::') continue
      let alias = t
      if (toks[p] === 'as') { alias = toks[p + 1]; p += 2 }
      if (t === 'self') { segs.pop(); if (alias === 'self') alias = segs.at(-1) }
      out.push({ segs, alias }); return
    }
  }
  if (!/^\s*::/.test(body)) tree([])
  return out
}

// Pass 1, per module: the references it makes ({ hit, test }) and the items its `use`s import.
for (const mod of modules.values()) {
  const { text } = mod
  const testSpans = [...text.matchAll(new RegExp(CFG_TEST, 'g'))].map((m) => [m.index, itemEnd(text, m.index + m[0].length)])
  const at = (pos) => ({
    scope: [...mod.path, ...inlineMods(text).filter(([a, b]) => a < pos && pos < b).map((x) => x[2])],
    test: mod.test || testSpans.some(([a, b]) => a <= pos && pos < b),
  })
  // `use` declarations first (they also name the modules that code then uses as `m::Item`).
  const aliases = new Map(), blanked = text.split('')
  mod.refs = []; mod.imports = new Map(); mod.aliases = aliases
  text.replace(/\bpub\s*\(\s*in\b[^)]*\)/g, (s, i) => { for (let k = i; k < i + s.length; k++) blanked[k] = ' ' })
  for (const m of text.matchAll(/\buse\s+([^;]*);/g)) {
    const { scope, test } = at(m.index)
    for (const leaf of useLeaves(m[1])) {
      const hit = resolve(leaf.segs, scope, aliases)
      if (!hit) continue
      if (leaf.glob) hit.name ??= '*'
      else if (hit.name === null) aliases.set(leaf.alias, hit.to ? hit.to.split('::') : [])
      else if (!test) mod.imports.set(leaf.alias, hit)
      mod.refs.push({ hit, test })
    }
    for (let k = m.index; k < m.index + m[0].length; k++) blanked[k] = ' '
  }
  // Then paths in code; one followed by `(` or `!` ends in a function or macro, not a module.
  const code = blanked.join('')
  for (const m of code.matchAll(/(?<![\w:])[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)+(?=\s*(\(|!)?)/g)) {
    const { scope, test } = at(m.index), hit = resolve(m[0].split(/\s*::\s*/), scope, aliases, m[1] ? 1 : 0)
    if (hit) mod.refs.push({ hit, test })
  }
}

// Pass 2: edges "from\tto" -> { names: name -> only test code uses it, test: so for every name }.
const edges = new Map()
for (const mod of modules.values()) {
  for (let { hit, test } of mod.refs) {
    if (through) hit = follow(hit, mod.key)
    if (hit.to === mod.key) continue
    const k = `${mod.key}\t${hit.to}`
    const e = edges.get(k) ?? { names: new Map(), test: true }, name = hit.name ?? '(module)'
    test ||= modules.get(hit.to).test
    e.names.set(name, (e.names.get(name) ?? true) && test); e.test &&= test
    edges.set(k, e)
  }
}

// Tarjan's strongly connected components over the edges kept; only those of 2+ modules.
function cycles(keep) {
  const adj = new Map([...modules.keys()].map((k) => [k, []]))
  for (const [k, e] of edges) { const [a, b] = k.split('\t'); if (keep(a, b, e)) adj.get(a).push(b) }
  let index = 0
  const idx = new Map(), low = new Map(), stack = [], on = new Set(), found = []
  const visit = (v) => {
    idx.set(v, index); low.set(v, index++); stack.push(v); on.add(v)
    for (const w of adj.get(v)) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))) }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
    }
    if (low.get(v) !== idx.get(v)) return
    const scc = []
    for (let w; w !== v;) { w = stack.pop(); on.delete(w); scc.push(w) }
    if (scc.length > 1) found.push(scc.map(show).sort())
  }
  for (const v of adj.keys()) if (!idx.has(v)) visit(v)
  return found.sort((a, b) => b.length - a.length || a[0].localeCompare(b[0]))
}
const show = (k) => k || 'crate', unshow = (s) => (s === 'crate' ? '' : s)

function print(title, sccs, keep) {
  console.log(`${title}: ${sccs.length} cycle(s)`)
  sccs.forEach((scc, n) => {
    console.log(`\n  #${n + 1} (${scc.length} modules) ${scc.join(' ')}`)
    const inside = new Set(scc.map(unshow))
    for (const [k, e] of [...edges].sort(([a], [b]) => a.localeCompare(b))) {
      const [a, b] = k.split('\t')
      if (!inside.has(a) || !inside.has(b) || !keep(a, b, e)) continue
      const names = [...e.names].filter(([x, t]) => (x !== '(module)' || e.names.size === 1) && (!t || keep !== prod))
      console.log(`    ${show(a)} -> ${show(b)}: ${names.map(([x, t]) => x + (t ? ' [test]' : '')).sort().join(', ')}`)
    }
  })
}

const prod = (a, b, e) => !e.test && !modules.get(a).test && !modules.get(b).test
const primary = cycles(prod), withTests = cycles(() => true)
print('Without test-only code (gated)', primary, prod)
print('\nWith test-only code: the cycles that differ', withTests.filter((c) => !primary.some((p) => `${p}` === `${c}`)), () => true)

const allowed = existsSync(allowPath)
  ? readFileSync(allowPath, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')).map((l) => l.split(/\s+/))
  : []
if (writeAllow) {
  const header = '# Module cycles known today (node scripts/module-cycles.mjs --write-allow); a new one fails npm test.\n'
  writeFileSync(allowPath, header + primary.map((c) => c.join(' ') + '\n').join(''))
  console.log(`\nwrote ${primary.length} cycle(s) to ${relative(root, allowPath)}`)
}
const unlisted = writeAllow || through ? [] : primary.filter((c) => !allowed.some((a) => c.every((m) => a.includes(m))))
const stale = writeAllow || through ? [] : allowed.filter((a) => !primary.some((c) => `${c}` === `${a}`))
for (const c of unlisted) console.log(`\nNEW cycle (not in ${relative(root, allowPath)}): ${c.join(' ')}`)
for (const a of stale) console.log(`\nallowlist line no longer a cycle as such (tighten with --write-allow): ${a.join(' ')}`)
console.log(`\nmodule-cycles: ${modules.size} modules, ${edges.size} edges; ${primary.length} cycle(s) over ${primary.flat().length} modules ` +
  `(${withTests.length} with test code); ${through ? '--through: not gated' : `${unlisted.length} not allowlisted${unlisted.length ? ' — FAIL' : ''}`}`)
process.exit(unlisted.length ? 1 : 0)
