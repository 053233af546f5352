// What the cli-list, cli-usage, cli-diff and cli-serve test files share: the command line run
// as a real subprocess (bin/toolnexus.mjs, without colour switches), the servers of their configs,
// and what their output is matched with.
import path from "node:path"
import { nodeFixture, repoRoot, runNode } from "../helpers.mjs"

export const BIN = path.join(repoRoot, "bin", "toolnexus.mjs")
export const ANSI = /\x1b\[/
export const SGR = /\x1b\[[0-9;]*m/

/** An environment without colour switches, plus `extra`. */
export function envWith(extra = {}) {
  const env = { ...process.env, ...extra }
  for (const key of ["NO_COLOR", "FORCE_COLOR"]) if (!(key in extra)) delete env[key]
  return env
}

/** Runs `node bin/toolnexus.mjs ...args` from the repository root; resolves { code, signal, stdout, stderr }. */
export const cli = (args, { env = {} } = {}) => runNode(BIN, { args, env: envWith(env), timeout: 25000 })

/** A stdio fixture server (see fixtures/stdio-server.mjs) serving `tools`, writing its pid to `pidFile`. */
export function fixtureServer(tools, pidFile) {
  const spec = { command: nodeFixture("stdio-server", "--tools", tools.join(",")) }
  if (pidFile) spec.env = { PID_FILE: pidFile }
  return spec
}

export const everything = {
  command: process.execPath,
  args: ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
  timeout: 20000,
}
export const disabled = { type: "remote", url: "http://127.0.0.1:9/mcp", enabled: false }
export const missing = { command: ["/nonexistent-toolnexus-cli-test-binary"], timeout: 5000 }
export const crash = { command: nodeFixture("crash-server") }

// A fixture tool as ToolInfo: the SDK lists `execution` on every tool, and it is kept as given.
export const plain = (name) => ({
  name,
  description: name,
  inputSchema: { type: "object", properties: {} },
  execution: { taskSupport: "forbidden" },
})
export const usageLine = /^Usage: toolnexus/m
