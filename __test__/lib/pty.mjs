// `toolnexus` run in a real pseudo-terminal (fixtures/pty-run.py: stdin and stderr on the
// terminal, stdout in a file), for the tests of what the CLI asks at a terminal
// (cli-elicit-pty.test.mjs, cli-add.test.mjs).
import { spawn } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { repoRoot, tmpFile } from "../helpers.mjs"
import { BIN, envWith } from "./cli.mjs"

const PTY = path.join(repoRoot, "__test__", "fixtures", "pty-run.py")
/** How long one prompt may take to appear: a bound on a hang, not a stand-in for a sync. */
export const HANG = 20000

/** What the terminal shows, without cursor movements and colours, lines ending in \n. */
export const screenText = (raw) => raw.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r+\n/g, "\n").replace(/\r/g, "")

/**
 * Runs `toolnexus ...args` in a pseudo-terminal, in `cwd` with `env` over the test environment
 * (NO_COLOR set); `defer` (deferredCleanup's) kills it if a test leaves it running.
 * `expect(text)` resolves once `text` appears on the terminal after what the previous expect
 * matched (so repeated prompts are matched in order); `type(keys)` types; `exited` resolves
 * { code, stdout (the file), screen, raw }.
 */
export function inPty(args, { defer, cwd = repoRoot, env = {} }) {
  const stdoutFile = tmpFile("pty-stdout")
  const child = spawn("python3", [PTY, stdoutFile, process.execPath, BIN, ...args], {
    cwd,
    env: envWith({ NO_COLOR: "1", ...env }),
    stdio: ["pipe", "pipe", "pipe"],
  })
  let raw = ""
  let errors = ""
  let cursor = 0
  let waiter = null
  const check = () => {
    if (!waiter) return
    const at = screenText(raw).indexOf(waiter.text, cursor)
    if (at < 0) return
    cursor = at + waiter.text.length
    clearTimeout(waiter.timer)
    const { resolve } = waiter
    waiter = null
    resolve()
  }
  child.stdout.setEncoding("utf8").on("data", (d) => {
    raw += d
    check()
  })
  child.stderr.setEncoding("utf8").on("data", (d) => (errors += d))
  const exited = new Promise((resolve) =>
    child.on("close", (code) => {
      if (waiter) {
        clearTimeout(waiter.timer)
        waiter.reject(new Error(`exited (${code}) while waiting for ${JSON.stringify(waiter.text)}; the terminal showed:\n${screenText(raw)}${errors}`))
      }
      let stdout = null
      try {
        stdout = fs.readFileSync(stdoutFile, "utf8")
      } catch {} // the command never started: `errors` says why
      resolve({ code, stdout, screen: screenText(raw) + errors, raw })
    }),
  )
  defer(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await exited
  })
  return {
    expect(text) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiter = null
          reject(new Error(`${JSON.stringify(text)} did not appear within ${HANG} ms; the terminal showed:\n${screenText(raw).slice(cursor)}`))
        }, HANG)
        waiter = { text, resolve, reject, timer }
        check()
      })
    },
    type: (keys) => child.stdin.write(keys),
    exited,
  }
}
