// A 2026-07-28 client of the tasks extension on the wire (raw JSON-RPC over fetch(): no SDK
// client speaks this era's tasks yet), and polling a task to a status.
import assert from "node:assert/strict"

export const TASKS = "io.modelcontextprotocol/tasks"

/** A 2026-07-28 client on the wire; `extensions` false leaves the tasks extension undeclared. */
export function wire(url, { extensions = true } = {}) {
  let id = 0
  const capabilities = { elicitation: {}, ...(extensions ? { extensions: { [TASKS]: {} } } : {}) }
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "wire", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  }
  /** One request; resolves its JSON-RPC response. */
  return async function request(method, params = {}) {
    const name = method === "tools/call" ? params.name : params.taskId
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        ...(name === undefined ? {} : { "mcp-name": name }),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params: { ...params, _meta: meta } }),
    })
    const text = await response.text()
    const data = text.split("\n").filter((l) => l.startsWith("data:") && l.length > 5).map((l) => JSON.parse(l.slice(5)))
    return data.length ? data.at(-1) : JSON.parse(text)
  }
}

/** Polls tasks/get until the task's status is one of `statuses` (bounded by the test's timeout). */
export async function until(request, taskId, statuses) {
  for (;;) {
    const { result, error } = await request("tasks/get", { taskId })
    assert.equal(error, undefined, JSON.stringify(error))
    if (statuses.includes(result.status)) return result
    await new Promise((r) => setTimeout(r, 20))
  }
}

