// The gate of the conformance run (run.mjs): expected.json's entries read per era, the runs
// planned from them against the suite's own list, the suite's result files read and tallied, a
// server scenario judged, each row's verdict, and the table printed.
import fs from "node:fs"
import path from "node:path"

export const EXTENSION = "extension"

const here = path.dirname(new URL(import.meta.url).pathname)

/**
 * The Node that runs the suite's CLI (it needs >= 22): this one if new enough, else the one
 * scripts/setup-test-deps.sh installs under node22/; `null` when that is missing too.
 */
export function suiteNode() {
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath
  const platform = process.platform === "win32" ? "win" : process.platform
  const bin = path.join(here, "node22", "node_modules", `node-${platform}-${process.arch}`, "bin", platform === "win" ? "node.exe" : "node")
  return fs.existsSync(bin) ? bin : null
}

/** An entry of expected.json for one era: { kind: "pass"|"gap"|"skip"|"skipped-by-suite", reason }. */
export function entryFor(value, era) {
  const v = typeof value === "object" && value !== null ? value[era] : value
  if (typeof v !== "string") return null
  const m = v.match(/^(pass|gap|skip|skipped-by-suite)(?::\s*(.+))?$/)
  if (!m || (m[1] !== "pass" && !m[2])) return null
  return { kind: m[1], reason: m[2] ?? "" }
}

/**
 * The eras an extension's scenario (on no spec timeline) is run at: an entry keyed by era runs
 * at each of those eras the gate runs; a plain entry at the pseudo-era "extension" (the newest
 * era).
 */
function extensionEras(value, eras) {
  if (typeof value === "object" && value !== null) return eras.filter((era) => era in value)
  return [EXTENSION]
}

/** The runs to make, per mode and era, checked against the suite's own list. */
export function plan(expected, version, lists) {
  const problems = []
  const runs = { server: [], client: [] }
  for (const mode of ["server", "client"]) {
    const entries = expected[mode] ?? {}
    for (const [name, tags] of lists[mode]) {
      // An extension's scenario (tagged "extension", on no spec timeline) is run when listed
      // (forced): at the eras its entry is keyed by, else at the pseudo-era "extension" (the
      // newest era).
      const extension = tags.includes(EXTENSION)
      const eras = extension
        ? name in entries
          ? extensionEras(entries[name], expected.eras)
          : []
        : expected.eras.filter((era) => tags.includes(era))
      if (eras.length === 0) continue // an unlisted extension, or only at eras not run here
      if (!(name in entries)) {
        problems.push(`${mode} scenario "${name}" [${eras.join(", ")}] is not in expected.json: classify it`)
        continue
      }
      for (const era of eras) {
        const entry = entryFor(entries[name], era)
        if (!entry)
          problems.push(`${mode} "${name}" at ${era}: want "pass", "gap: <reason>", "skip: <reason>" or "skipped-by-suite: <reason>"`)
        else if (entry.kind === "skip" && mode === "server")
          problems.push(`server "${name}": every server scenario is run; use "gap: <reason>"`)
        else runs[mode].push({ mode, era, name, extension, ...entry })
      }
    }
    for (const name of Object.keys(entries)) {
      const tags = lists[mode].get(name)
      if (!tags || !(expected.eras.some((era) => tags.includes(era)) || tags.includes(EXTENSION)))
        problems.push(`expected.json lists ${mode} scenario "${name}", which suite ${version} does not run at ${expected.eras.join(", ")}`)
    }
  }
  return { runs, problems }
}

/** Every checks.json under `dir`, keyed by scenario name (result dirs are `<name>-<timestamp>`). */
export function readResults(dir, prefix = "") {
  const found = new Map()
  const walk = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name)
      if (!entry.isDirectory()) continue
      const checks = path.join(full, "checks.json")
      if (fs.existsSync(checks)) {
        const rel = path.relative(dir, full).split(path.sep).join("/")
        const name = rel.replace(/-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/, "").slice(prefix.length)
        found.set(name, { dir: full, checks: JSON.parse(fs.readFileSync(checks, "utf8")) })
      } else walk(full)
    }
  }
  if (fs.existsSync(dir)) walk(dir)
  return found
}

export function tally(checks) {
  const count = (s) => checks.filter((c) => c.status === s).length
  return { passed: count("SUCCESS"), failed: count("FAILURE"), warnings: count("WARNING") }
}

export function failureLines(checks) {
  return checks
    .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
    .map((c) => `${c.status === "WARNING" ? "warning" : "failed"} ${c.id}: ${c.errorMessage ?? c.description}`)
}

export function judgeServer(results, planned) {
  const result = results.get(planned.name)
  if (!result) return { ...planned, outcome: "missing", detail: ["the suite produced no result for it"] }
  const t = tally(result.checks)
  // The suite adds a wire-schema check to every scenario that connects: it is no verdict on the
  // scenario's own checks (all SKIPPED when the server does not offer what it tests), though a
  // failed one still fails it.
  const own = result.checks.filter((c) => !c.id.startsWith("wire-schema"))
  const skipped = own.length > 0 && own.every((c) => c.status === "SKIPPED")
  const outcome = t.failed > 0 ? "fail" : tally(own).passed > 0 ? "pass" : skipped ? "skipped by suite" : "no verdict"
  const detail = failureLines(result.checks)
  if (skipped) detail.push(...result.checks.map((c) => `skipped ${c.id}: ${c.errorMessage ?? c.description}`))
  return { ...planned, ...t, outcome, detail, resultDir: result.dir }
}

// Client mode: one CLI run per scenario; the suite's exit code is its verdict (failed or warning

/**
 * ok: matched its entry; regression: a "pass" that did not; stale: a "gap" that passes now, or a
 * "skipped-by-suite" the suite now scores (or no longer runs as skipped).
 */
export function verdict(r) {
  if (r.kind === "pass") return r.outcome === "pass" ? "ok" : "REGRESSION"
  if (r.kind === "skipped-by-suite") return r.outcome === "skipped by suite" ? "ok" : "NOW SCORED"
  return r.outcome === "pass" ? "NOW PASSES" : "ok"
}

export function printTable(rows) {
  const head = ["mode", "era", "scenario", "expected", "result", "checks ok/failed", "verdict"]
  const body = rows.map((r) => [
    r.mode,
    r.era,
    r.name,
    r.kind,
    r.outcome,
    r.kind === "skip" ? "-" : `${r.passed ?? 0}/${r.failed ?? 0}${r.warnings ? ` (+${r.warnings} warn)` : ""}`,
    r.kind === "skip" ? "not run" : r.verdict,
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)))
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd()
  console.log(line(head))
  console.log(line(widths.map((w) => "-".repeat(w))))
  for (const b of body) console.log(line(b))
}
