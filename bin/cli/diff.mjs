// `toolnexus diff [<config>] <snapshot.json> [--json] [--timeout ms]`: has a tool surface drifted
// from a saved `toolnexus list --json` output?
import fs from "node:fs"
import { resolveServers } from "./discover.mjs"
import { ArgumentError, SURFACE_KINDS, UsageError, liveInventory } from "./inventory.mjs"
import { oneOffOptionsHelp, oneOffTarget } from "./oneoff.mjs"
import { colorEnabled, fit, palette } from "./term.mjs"

export const DIFF_HELP = `Usage: toolnexus diff [<config>] <snapshot.json> [--json] [--timeout ms]
       toolnexus diff --stdio "<command line>" <snapshot.json> [options]
       toolnexus diff <http(s)://url> <snapshot.json> [--header "Name: value" …] [options]

Lists <config> live (as \`toolnexus list\` does; without <config>, the client configs
\`toolnexus configs\` finds) and compares it with <snapshot.json>,
a saved \`toolnexus list --json\` output: status changes per server, and for servers
connected on both sides, added, removed and changed tools, resources, resource
templates, prompts and skills. A tool has changed when its description or its
inputSchema differs (a deep comparison: object key order is ignored, array order is
not); a resource or template when its name, description or mimeType does (resources
are keyed by uri, templates by uriTemplate); a prompt when its description or
arguments do; a skill (keyed by the uri of its SKILL.md) when its name, description,
frontmatter or files (their digests) do. A snapshot without resources, templates,
prompts or skills (from an older toolnexus) is not compared for them. Failure reasons are not compared.

  toolnexus list mcp.json --json > tools.snapshot.json    # record
  toolnexus diff mcp.json tools.snapshot.json             # check, e.g. in CI

A one-off target (--stdio "<command line>" or a URL, as \`toolnexus list --help\`
describes) is listed in place of a config; record its snapshot with the same target
(\`toolnexus list --stdio "…" --json\`), so the server has the same name on both sides.

Options:
  --json        print the comparison as JSON on stdout, nothing else:
                  { "servers": {
                      "<server>": {
                        "status":  { "from": "<status>", "to": "<status>" },  (only if it changed)
                        "error":   "<why it failed>",       (only if it failed in the live run)
                        "added":   ["<tool>", ...],         (live order)
                        "removed": ["<tool>", ...],         (snapshot order)
                        "changed": [{ "name": "<tool>", "fields": ["description", "inputSchema"] }],
                        "resources": { "added": ["<uri>"], "removed": [...],
                                       "changed": [{ "key": "<uri>", "fields": [...] }] },
                        "resourceTemplates": { … keyed by uriTemplate },
                        "prompts": { … keyed by name },
                        "skills": { … keyed by uri }
                      } },
                    "drift": true | false }
                Every server of the live config, then every server only in the snapshot,
                appears once. A status is "connected", "disabled", "failed", or "absent"
                when the server is missing on that side. "fields" lists only the fields
                that differ, in that order. "resources", "resourceTemplates", "prompts" and
                "skills" appear only when something of that kind changed. "drift" is true when any
                server has a status change or a non-empty added, removed or changed.
  --timeout ms  overall deadline for the live listing (see \`toolnexus list --help\`)
${oneOffOptionsHelp(16)}
  -h, --help    show this help

Exit status: 0 no drift, 1 drift, 2 usage, config or snapshot error.
`

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v)

/** Reads and checks a `list --json` snapshot; anything else is a `UsageError` (exit 2). */
export function readSnapshot(file) {
  let text
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (err) {
    throw new UsageError(`toolnexus: cannot read snapshot ${file}: ${err.message}`)
  }
  let data
  try {
    data = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`toolnexus: snapshot ${file} is not valid JSON: ${err.message}`)
  }
  const bad = (why) => new UsageError(`toolnexus: snapshot ${file} is not a \`toolnexus list --json\` output: ${why}`)
  if (!isObject(data)) throw bad("expected an object")
  if (!isObject(data.status)) throw bad(`"status" must be an object`)
  for (const [server, status] of Object.entries(data.status)) {
    if (typeof status !== "string") throw bad(`status.${server} must be a string`)
  }
  const tools = data.tools ?? {}
  if (!isObject(tools)) throw bad(`"tools" must be an object`)
  for (const [server, list] of Object.entries(tools)) {
    if (!Array.isArray(list)) throw bad(`tools.${server} must be an array`)
    list.forEach((tool, i) => {
      if (!isObject(tool) || typeof tool.name !== "string") throw bad(`tools.${server}[${i}] must be an object with a string "name"`)
    })
  }
  const snapshot = { tools, status: data.status, errors: isObject(data.errors) ? data.errors : {} }
  for (const kind of SURFACE_KINDS) {
    if (data[kind] === undefined) continue
    const lists = data[kind]
    if (!isObject(lists)) throw bad(`"${kind}" must be an object`)
    const key = SURFACE[kind].key
    for (const [server, list] of Object.entries(lists)) {
      if (!Array.isArray(list)) throw bad(`${kind}.${server} must be an array`)
      list.forEach((item, i) => {
        if (!isObject(item) || typeof item[key] !== "string") throw bad(`${kind}.${server}[${i}] must be an object with a string "${key}"`)
      })
    }
    snapshot[kind] = lists
  }
  return snapshot
}

/** Each kind beside tools: its identifying field, the fields compared, and its name in words. */
const SURFACE = {
  resources: { key: "uri", fields: ["name", "description", "mimeType"], words: "resource" },
  resourceTemplates: { key: "uriTemplate", fields: ["name", "description", "mimeType"], words: "template" },
  prompts: { key: "name", fields: ["description", "arguments"], words: "prompt" },
  skills: { key: "uri", fields: ["name", "description", "frontmatter", "files"], words: "skill" },
}

/** Added, removed and changed items of one kind of one server, or undefined when none. */
function diffKind(kind, before, after) {
  const { key, fields } = SURFACE[kind]
  const old = new Map(before.map((item) => [item[key], item]))
  const now = new Map(after.map((item) => [item[key], item]))
  const entry = { added: [], removed: [], changed: [] }
  for (const [id, item] of now) {
    const was = old.get(id)
    if (!was) {
      entry.added.push(id)
      continue
    }
    const differ = fields.filter((field) => !sameJson(was[field] ?? null, item[field] ?? null))
    if (differ.length > 0) entry.changed.push({ key: id, fields: differ })
  }
  for (const id of old.keys()) if (!now.has(id)) entry.removed.push(id)
  return entry.added.length || entry.removed.length || entry.changed.length ? entry : undefined
}

/** JSON with object keys sorted at every depth, for order-insensitive equality. */
function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical)
  if (isObject(value)) return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k])]))
  return value
}
const sameJson = (a, b) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))

const statusOf = (inventory, server) => (Object.hasOwn(inventory.status, server) ? inventory.status[server] : "absent")
const toolsOf = (inventory, server) => new Map((Object.hasOwn(inventory.tools, server) ? inventory.tools[server] : []).map((t) => [t.name, t]))

/** Compares two inventories (`before` = snapshot, `after` = live); the shape is documented in DIFF_HELP. */
export function diffInventories(before, after) {
  const names = [...Object.keys(after.status), ...Object.keys(before.status).filter((n) => !Object.hasOwn(after.status, n))]
  const servers = {}
  let drift = false
  for (const name of names) {
    const from = statusOf(before, name)
    const to = statusOf(after, name)
    const entry = {}
    if (from !== to) entry.status = { from, to }
    if (to === "failed") entry.error = after.errors[name] ?? ""
    entry.added = []
    entry.removed = []
    entry.changed = []
    if (from === "connected" && to === "connected") {
      const old = toolsOf(before, name)
      const now = toolsOf(after, name)
      for (const [tool, info] of now) {
        const was = old.get(tool)
        if (!was) {
          entry.added.push(tool)
          continue
        }
        const fields = []
        if ((was.description ?? "") !== (info.description ?? "")) fields.push("description")
        if (!sameJson(was.inputSchema, info.inputSchema)) fields.push("inputSchema")
        if (fields.length > 0) entry.changed.push({ name: tool, fields })
      }
      for (const tool of old.keys()) if (!now.has(tool)) entry.removed.push(tool)
      for (const kind of SURFACE_KINDS) {
        // A snapshot from before this kind was listed is not compared for it.
        if (before[kind] === undefined || after[kind] === undefined) continue
        const changes = diffKind(kind, before[kind][name] ?? [], after[kind][name] ?? [])
        if (changes) {
          entry[kind] = changes
          drift = true
        }
      }
    }
    if (entry.status || entry.added.length || entry.removed.length || entry.changed.length) drift = true
    servers[name] = entry
  }
  return { servers, drift }
}

function printHuman(out, result, snapshotFile, c) {
  let changes = 0
  let drifted = 0
  for (const [server, entry] of Object.entries(result.servers)) {
    const lines = []
    if (entry.status) {
      const reason = entry.error ? `  ${c.dim(fit(entry.error, 100))}` : ""
      lines.push(`  status ${entry.status.from} → ${entry.status.to}${reason}`)
    }
    for (const tool of entry.added) lines.push(`  ${c.green("+")} ${tool}`)
    for (const tool of entry.removed) lines.push(`  ${c.red("-")} ${tool}`)
    for (const { name, fields } of entry.changed) lines.push(`  ${c.yellow("~")} ${name}  ${c.dim(`(${fields.join(", ")})`)}`)
    for (const kind of SURFACE_KINDS) {
      const changes = entry[kind]
      if (!changes) continue
      const { words } = SURFACE[kind]
      for (const id of changes.added) lines.push(`  ${c.green("+")} ${words} ${id}`)
      for (const id of changes.removed) lines.push(`  ${c.red("-")} ${words} ${id}`)
      for (const { key, fields } of changes.changed) lines.push(`  ${c.yellow("~")} ${words} ${key}  ${c.dim(`(${fields.join(", ")})`)}`)
    }
    if (lines.length === 0) continue
    changes += lines.length
    drifted += 1
    out.write(`${c.bold(server)}\n${lines.join("\n")}\n`)
  }
  const total = Object.keys(result.servers).length
  if (result.drift) out.write(`\n${c.red("drift")}: ${changes} ${changes === 1 ? "change" : "changes"} in ${drifted} of ${total} servers since ${snapshotFile}\n`)
  else out.write(`${c.green("no drift")}: ${total} ${total === 1 ? "server matches" : "servers match"} ${snapshotFile}\n`)
}

export async function diff({ positionals, values }, { signal }) {
  const target = oneOffTarget("diff", positionals, values)
  if (target && target.positionals.length !== 1) {
    throw new ArgumentError(target.positionals.length === 0 ? "toolnexus diff: missing <snapshot.json>" : `toolnexus diff: unexpected argument "${target.positionals[1]}" (a one-off target takes no <config>)`)
  }
  const [config, snapshotFile] = target ? [undefined, target.positionals[0]] : positionals.length === 2 ? positionals : [undefined, positionals[0]]
  const { servers } = target ? { servers: target.servers } : resolveServers(config)
  const snapshot = readSnapshot(snapshotFile)
  const { inventory } = await liveInventory(servers, { deadline: values.timeout, signal })
  const result = diffInventories(snapshot, inventory)
  if (values.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
  else printHuman(process.stdout, result, snapshotFile, palette(colorEnabled(process.stdout)))
  return result.drift ? 1 : 0
}
