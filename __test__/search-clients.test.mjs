// Served toolSearch (issue 24) met by real clients: the official Python client through it,
// `toolnexus serve --tool-search` as a subprocess, and the demo config's tools/list sizes (the
// README's numbers).
//
// server-filesystem and server-memory are published packages, devDependencies of the repo.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import path from "node:path"
import { createToolkit } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { PYTHON, repoRoot, tmpConfig, tmpDir } from "./helpers.mjs"
import { BIN, startCli } from "./lib/gateway.mjs"
import { MEMORY, UPSTREAM, everything, filesystem, fixtureServer, names, search, searchHarness, via } from "./lib/search.mjs"

const { defer, serveAndDefer, sdkClient } = searchHarness(afterEach)
const T = { timeout: 120_000 }

/** search_client.py against `url`; resolves its JSON report. */
function pythonSearch(url, mode, query, tool, args) {
  const script = path.join(repoRoot, "__test__", "python", "search_client.py")
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [script, `${url}/mcp`, mode, query, tool, JSON.stringify(args)], { timeout: 60000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`python search client (${mode}) failed: ${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout))
    })
  })
}

test("the official Python client lists, searches and calls through call_tool (progress and elicitation included)", T, async () => {
  const tk = await createToolkit({ builtins: false, mcpConfig: { mcpServers: { up: fixtureServer(...UPSTREAM) } }, toolSearch: { always: ["up_add"] } })
  defer(() => tk.close())
  const { url } = await serveAndDefer(tk)
  for (const mode of ["legacy", "2026-07-28"]) {
    const slow = await pythonSearch(url, mode, "a slow tool that reports progress", "up_slow", { steps: 2, intervalMs: 10 })
    assert.equal(slow.protocolVersion, mode === "legacy" ? slow.protocolVersion : mode)
    assert.deepEqual(slow.tools, ["search_tools", "call_tool", "up_add"], mode)
    assert.equal(slow.searchIsError, false)
    assert.ok(slow.found.includes("up_slow"), `${mode}: ${slow.found}`)
    assert.equal(slow.textIsStructured, true)
    assert.equal(slow.complete, true)
    assert.deepEqual([slow.text, slow.isError, slow.progress], ["slow done after 2 steps", false, [1, 2]], mode)

    const structured = await pythonSearch(url, mode, "structured content", "up_structured", {})
    assert.equal(structured.found[0], "up_structured", `${mode}: ${structured.found}`)
    assert.deepEqual([structured.text, structured.structuredContent], ["sum is 3", { sum: 3, items: ["x", "y"] }])

    const elicit = await pythonSearch(url, mode, "elicit a name from the client", "up_elicit", {})
    assert.ok(elicit.found.includes("up_elicit"), `${mode}: ${elicit.found}`)
    assert.deepEqual(elicit.elicitations, ["What is your name?"], mode)
    assert.deepEqual(JSON.parse(elicit.text), { action: "accept", content: { name: "Ada Lovelace" } }, mode)

    const bad = await pythonSearch(url, mode, "add", "up_add", { a: "two", b: 1 })
    assert.equal(bad.isError, true, `${mode}: ${JSON.stringify(bad)}`)
  }
})

// ---------------------------------------------------------------------------------------------
// toolnexus serve --tool-search

test("toolnexus serve --tool-search: served search over HTTP and stdio; bad flags are exit 2", T, async () => {
  const config = tmpConfig({ mcpServers: { up: fixtureServer("add", "echo", "slow") } })
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--tool-search", "--tool-search-limit", "1", "--tool-search-always", "up_echo,up_nope"])
  const url = await gw.serving
  assert.match(gw.stdout(), /^toolnexus: serving 3 tools at http:\/\/127\.0\.0\.1:\d+\/mcp\n$/)
  assert.match(gw.stderr(), /--tool-search-always: no tool named "up_nope" \(ignored\)/)
  assert.match(gw.stderr(), /toolnexus: --tool-search: tools\/list shows search_tools and call_tool and up_echo; 3 tools searched/)
  const client = await sdkClient(url)
  assert.deepEqual(names((await client.listTools()).tools), ["search_tools", "call_tool", "up_echo"])
  const add = await search(client, { query: "add two numbers" })
  assert.deepEqual(names(add), ["up_add"], "--tool-search-limit 1")
  assert.deepEqual((await via(client, "up_add", { a: 20, b: 22 })).content, [{ type: "text", text: "42" }])
  await client.close()

  // Over stdio, with the SDK's own stdio client.
  const stdio = new Client({ name: "search-test", version: "1.0.0" })
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "serve", config, "--stdio", "--tool-search"], cwd: repoRoot, stderr: "ignore" })
  defer(() => stdio.close())
  await stdio.connect(transport)
  assert.deepEqual(names((await stdio.listTools()).tools), ["search_tools", "call_tool"])
  const echo = /** @type {any} */ ((await stdio.callTool({ name: "search_tools", arguments: { query: "echo the text back" } })).structuredContent).tools
  assert.equal(echo[0]?.name, "up_echo")
  assert.deepEqual((await via(stdio, "up_echo", { text: "over stdio" })).content, [{ type: "text", text: "over stdio" }])
  await stdio.close()

  const usage = "Usage: toolnexus serve [<config>] [--addr 127.0.0.1:8808 | --stdio] [--watch]\nRun `toolnexus serve --help` for details.\n"
  for (const [args, message] of [
    [["--tool-search-limit", "3"], "toolnexus serve: --tool-search-limit needs --tool-search"],
    [["--tool-search-always", "up_add"], "toolnexus serve: --tool-search-always needs --tool-search"],
    [["--tool-search", "--tool-search-limit", "0"], 'toolnexus serve: --tool-search-limit must be a whole number from 1 to 50, got "0"'],
    [["--tool-search", "--tool-search-limit", "51"], 'toolnexus serve: --tool-search-limit must be a whole number from 1 to 50, got "51"'],
    [["--tool-search", "--tool-search-limit", "two"], 'toolnexus serve: --tool-search-limit must be a whole number from 1 to 50, got "two"'],
    [["--tool-search", "--tool-search-always", ","], "toolnexus serve: --tool-search-always must name at least one tool"],
  ]) {
    const bad = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", ...args])
    const r = await bad.exited
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`)
    assert.equal(r.stdout, "")
    assert.equal(r.stderr, `${message}\n${usage}`)
  }
  const help = startCli(defer, ["serve", "--help"])
  assert.match((await help.exited).stdout, /--tool-search-always a,b/)
})

// ---------------------------------------------------------------------------------------------
// The tokens saved (the README's numbers)

test("the demo config's tools/list is much smaller with toolSearch (the README's numbers)", T, async (t) => {
  const mcpServers = {
    everything,
    filesystem: filesystem(),
    memory: { command: [process.execPath, MEMORY], env: { MEMORY_FILE_PATH: path.join(tmpDir(), "memory.jsonl") } },
  }
  const sizes = {}
  for (const toolSearch of [false, true]) {
    const tk = await createToolkit({ builtins: false, mcpConfig: { mcpServers }, toolSearch })
    defer(() => tk.close())
    assert.deepEqual(Object.values(tk.mcpStatus()), ["connected", "connected", "connected"], JSON.stringify(tk.mcpErrors()))
    const client = await sdkClient((await serveAndDefer(tk)).url)
    const { tools } = await client.listTools()
    sizes[String(toolSearch)] = { tools: tools.length, bytes: Buffer.byteLength(JSON.stringify({ tools })), catalog: tk.tools().length }
    if (toolSearch) {
      const answer = await client.callTool({ name: "search_tools", arguments: { query: "list the entries of a directory" } })
      sizes.answer = Buffer.byteLength(JSON.stringify(answer.structuredContent))
    }
  }
  const [full, searched] = [sizes.false, sizes.true]
  t.diagnostic(`tools/list without toolSearch: ${full.tools} tools, ${full.bytes} bytes (~${Math.round(full.bytes / 4)} tokens); with: ${searched.tools} tools, ${searched.bytes} bytes (~${Math.round(searched.bytes / 4)} tokens); one search_tools answer (5 matches): ${sizes.answer} bytes (~${Math.round(sizes.answer / 4)} tokens)`)
  assert.equal(searched.tools, 2)
  assert.equal(full.tools, full.catalog)
  assert.ok(searched.bytes * 10 < full.bytes, JSON.stringify(sizes))
})
