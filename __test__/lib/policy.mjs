// What the gateway-policy test files (gateway-*.test.mjs) share: the stdio fixture as an
// upstream that logs each call it receives, that log read back, the official Python client
// making a list of requests (__test__/python/ops_client.py), and an SDK client of a served URL.
import { execFile } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { PYTHON, nodeFixture, repoRoot } from "../helpers.mjs"

/** The stdio fixture with `tools`, logging each call, read or get it receives to `log`. */
export const upstream = (log, ...tools) => ({ command: nodeFixture("stdio-server", "--tools", tools.join(",")), env: { FIXTURE_CALL_LOG: log } })

/** What the upstream logged to `log`: { method, params } each, in order ([] before any). */
export const calls = (log) =>
  fs.existsSync(log)
    ? fs.readFileSync(log, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line))
    : []

/**
 * ops_client.py against the MCP endpoint `url` in `mode` (as `token`, when given); resolves its
 * report. A failure rejects with the client's stderr as `stderr`.
 */
export function opsClient(url, mode, ops, token) {
  const script = path.join(repoRoot, "__test__", "python", "ops_client.py")
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [script, url, mode, JSON.stringify(ops), ...(token ? [token] : [])], { timeout: 60000 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(new Error(`python ops client (${mode}) failed: ${error.message}\n${stderr}`), { stderr }))
      else resolve(JSON.parse(stdout))
    })
  })
}

/** An SDK client of the MCP endpoint `url` (with `headers`), closed by `defer`. */
export async function sdkClient(defer, url, headers = {}) {
  const client = new Client({ name: "policy-test", version: "1.0.0" })
  defer(() => client.close())
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return client
}
