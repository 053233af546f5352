// An OTLP/HTTP receiver for the telemetry tests: __test__/python/otlp_receiver.py, which decodes
// what it is sent with the official `opentelemetry-proto` package and prints each span and
// metric as a JSON line. `records` grows as they come; `until(predicate)` waits for them.
import path from "node:path"
import { spawn } from "node:child_process"
import { PYTHON, repoRoot, waitFor } from "../helpers.mjs"

/** Starts a receiver on 127.0.0.1:0 (`refuse`: every export is answered 503); closed by `defer`. */
export async function startReceiver(defer, { refuse = false } = {}) {
  const script = path.join(repoRoot, "__test__", "python", "otlp_receiver.py")
  const child = spawn(PYTHON, [script, ...(refuse ? ["--refuse"] : [])], { stdio: ["ignore", "pipe", "pipe"] })
  const exited = new Promise((resolve) => child.once("exit", resolve))
  defer(async () => {
    child.kill("SIGKILL")
    await exited
  })
  const records = []
  let port
  let rest = ""
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  child.stdout.setEncoding("utf8").on("data", (chunk) => {
    rest += chunk
    const lines = rest.split("\n")
    rest = lines.pop()
    for (const line of lines) {
      const record = JSON.parse(line)
      if (record.port !== undefined) port = record.port
      else records.push(record)
    }
  })
  await waitFor(() => port !== undefined || child.exitCode !== null, { timeout: 15000, message: "the OTLP receiver's port" })
  if (port === undefined) throw new Error(`the OTLP receiver exited: ${stderr}`)
  return {
    endpoint: `http://127.0.0.1:${port}`,
    records,
    spans: () => records.filter((r) => r.span !== undefined),
    metrics: () => records.filter((r) => r.metric !== undefined),
    /** Resolves the records once `predicate(records)` holds (bounded: a hang is a failure). */
    until: async (predicate, message) => {
      await waitFor(() => predicate(records), { timeout: 15000, message })
      return records
    },
  }
}

/** The OTLP span kinds as the protobuf numbers them. */
export const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 }
