#!/usr/bin/env node
// A naive baseline for the tool-search retrieval set (issue 24): rank every
// tool of the combined catalog by plain word overlap between the request and
// the tool's name, description and parameter names, then print recall@1 and
// recall@3 (split by `reuses`). For a sense of how hard requests.json is; the
// real ranker lives in crates/engine/src/search and bench/search.mjs.
//   node bench/search/baseline.mjs [--misses]
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const STOP = new Set("a an the of to in on for and or is are be with by from as at it its this that my me i you your our we what which who how do does can all any into".split(" "));
export function words(s) {
  return (s || "")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1 && !STOP.has(w))
    .map((w) => w.replace(/(ies|es|s)$/, (m) => (m === "ies" ? "y" : "")));
}

export function loadCatalog() {
  const tools = [];
  for (const f of readdirSync(join(here, "catalogs")).sort()) {
    const c = JSON.parse(readFileSync(join(here, "catalogs", f), "utf8"));
    for (const t of c.tools) tools.push({ id: `${c.server}/${t.name}`, server: c.server, tool: t });
  }
  return tools;
}

const tools = loadCatalog();
const requests = JSON.parse(readFileSync(join(here, "requests.json"), "utf8"));
const docs = tools.map(({ id, server, tool }) => {
  const text = [server, tool.name, tool.title, tool.description, ...Object.keys(tool.inputSchema?.properties || {})].join(" ");
  return { id, words: new Set(words(text)) };
});

const stats = { true: [0, 0, 0], false: [0, 0, 0] }; // [n, hit@1, hit@3]
const misses = [];
for (const r of requests) {
  const q = new Set(words(r.request));
  const ranked = docs
    .map((d) => ({ id: d.id, score: [...q].filter((w) => d.words.has(w)).length }))
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
  const rank = ranked.findIndex((d) => d.id === r.expect);
  const s = stats[String(!!r.reuses)];
  s[0]++;
  if (rank === 0) s[1]++;
  if (rank >= 0 && rank < 3) s[2]++;
  if (rank >= 3) misses.push(`${r.expect} at #${rank + 1} (top ${ranked[0].id}): ${r.request}`);
}
const f = (x) => x.toFixed(3);
console.log(`catalog: ${tools.length} tools from ${new Set(tools.map((t) => t.server)).size} servers; ${requests.length} requests`);
for (const [k, label] of [["false", "reuses: false"], ["true", "reuses: true"]]) {
  const [n, a, b] = stats[k];
  console.log(`${label.padEnd(14)} n=${String(n).padStart(3)}  recall@1 ${f(a / n)}  recall@3 ${f(b / n)}`);
}
const all = [0, 1, 2].map((i) => stats.true[i] + stats.false[i]);
console.log(`${"all".padEnd(14)} n=${String(all[0]).padStart(3)}  recall@1 ${f(all[1] / all[0])}  recall@3 ${f(all[2] / all[0])}`);
if (process.argv.includes("--misses")) for (const m of misses) console.log("  miss " + m);
