// The operator's page's worked example (docs/team-gateway.md, examples/team-gateway/): the
// team gateway's own files (curation, limits, result limits, two audiences, the policy module)
// served by `toolnexus serve` over the real filesystem and memory servers, GitHub left disabled
// (its curation waits for it to connect), met by the official Python client in both eras.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { deferredCleanup, repoRoot, tmpConfig, tmpDir } from "./helpers.mjs"
import { startCli } from "./lib/gateway.mjs"
import { FILESYSTEM, MEMORY } from "./lib/search.mjs"
import { opsClient } from "./lib/policy.mjs"

const T = { timeout: 120_000 }
const defer = deferredCleanup(afterEach)
const EXAMPLE = path.join(repoRoot, "examples", "team-gateway")

const python = opsClient

test("the team gateway of docs/team-gateway.md: two audiences, curated, guarded by its policy (Python both eras)", T, async () => {
  const docs = tmpDir()
  fs.mkdirSync(path.join(docs, "private"))
  fs.writeFileSync(path.join(docs, "runbook.md"), "Deploy with the token ghp_abcdefghijklmnopqrstuvwxyz0123456789.\n")
  fs.writeFileSync(path.join(docs, "private", "salaries.md"), "not for the gateway\n")
  // The example's servers, run from this checkout (no npx), GitHub disabled.
  const config = tmpConfig({
    mcpServers: {
      github: { type: "http", url: "https://api.githubcopilot.com/mcp/", enabled: false },
      files: { command: [process.execPath, FILESYSTEM, docs] },
      memory: { command: [process.execPath, MEMORY], env: { MEMORY_FILE_PATH: path.join(tmpDir(), "memory.jsonl") } },
    },
  })
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--tools-config", path.join(EXAMPLE, "gateway.json"), "--hooks", path.join(EXAMPLE, "policy.mjs")], { env: { TEAM_GATEWAY_HOURS: "0-24" } })
  const url = await gw.serving
  for (const mode of ["2026-07-28", "legacy"]) {
    const readers = await python(`${url}/mcp/readers`, mode, [
      { list: "tools" },
      { call: "docs_read_text_file", args: { path: path.join(docs, "runbook.md") } },
      { call: "docs_read_text_file", args: { path: path.join(docs, "private", "salaries.md") } },
      { call: "memory_create_entities", args: { entities: [] } },
    ])
    const [listed, runbook, secret, write] = readers.answers
    assert.ok(listed.tools.includes("docs_read_text_file") && listed.tools.includes("memory_read_graph"), mode)
    assert.ok(!listed.tools.some((t) => /write|create|delete|move/.test(t)), `${mode}: ${listed.tools}`)
    assert.equal(runbook.text, "Deploy with the token [redacted].\n", mode)
    assert.deepEqual([secret.text, secret.isError], ["the private folder is not served", true], mode)
    assert.match(JSON.stringify(write), /Unknown tool: memory_create_entities/, mode)

    const maintainers = await python(`${url}/mcp/maintainers`, mode, [{ list: "tools" }, { call: "memory_create_entities", args: { entities: [{ name: "Ada", entityType: "person", observations: [] }] } }])
    const tools = maintainers.answers[0].tools
    assert.ok(tools.includes("memory_create_entities") && tools.includes("docs_write_file"), mode)
    assert.ok(!tools.includes("docs_move_file") && !tools.includes("memory_delete_entities"), `${mode}: hidden tools are gone`)
    assert.equal(maintainers.answers[1].isError, false, mode)
  }
})
