// `toolnexus call`, run as a real subprocess against server-everything and the SDK fixture
// server: text, image and isError results, --json, key=value and --args, unknown tools and
// servers, an unreachable server; nothing left running.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import path from "node:path"
import * as toolnexus from "toolnexus"
import { deferredCleanup, isAlive, nodeFixture, readPid, repoRoot, runNode, serverEverything, tmpConfig, tmpFile } from "./helpers.mjs"

const T = { timeout: 60000 }
const BIN = path.join(repoRoot, "bin", "toolnexus.mjs")
deferredCleanup(afterEach)

const cli = (args) => runNode(BIN, { args, timeout: 25000 })
const everything = { command: process.execPath, args: [serverEverything, "stdio"], timeout: 20000 }

test("call: a text tool prints its text, exit 0; key=value values are JSON when they parse", T, async () => {
  const config = tmpConfig({ mcpServers: { everything } })
  const echo = await cli(["call", config, "everything", "echo", "message=hello world"])
  assert.equal(echo.code, 0, echo.stderr)
  assert.equal(echo.stdout, "Echo: hello world\n")
  assert.equal(echo.stderr, "")

  const sum = await cli(["call", config, "everything", "get-sum", "a=2", "b=40", "--json"])
  assert.equal(sum.code, 0, sum.stderr)
  assert.deepEqual(JSON.parse(sum.stdout), { content: [{ type: "text", text: "The sum of 2 and 40 is 42." }], isError: false })

  // A value that is not JSON stays a string; one that is JSON keeps its type ("42" → 42 would fail echo's schema).
  const quoted = await cli(["call", config, "everything", "echo", 'message="42"'])
  assert.equal(quoted.stdout, "Echo: 42\n")
  const typed = await cli(["call", config, "everything", "echo", "message=42"])
  assert.equal(typed.code, 1, "a number where the schema wants a string is the tool's error")
  assert.match(typed.stderr, /message/)

  // --args, with key=value on top of it.
  const args = await cli(["call", config, "everything", "get-sum", "--args", '{"a": 1, "b": 1}', "b=9"])
  assert.equal(args.stdout, "The sum of 1 and 9 is 10.\n")
})

test("call: an image tool summarises the image between its text parts; --json keeps the data", T, async () => {
  const config = tmpConfig({ mcpServers: { everything } })
  const r = await cli(["call", config, "everything", "get-tiny-image"])
  assert.equal(r.code, 0, r.stderr)
  const lines = r.stdout.split("\n")
  assert.equal(lines[0], "Here's the image you requested:")
  assert.match(lines[1], /^\[image image\/png, \d+\.\d kB\]$/)
  assert.equal(lines[2], "The image above is the MCP logo.")

  const json = await cli(["call", config, "everything", "get-tiny-image", "--json"])
  const result = JSON.parse(json.stdout)
  assert.equal(result.isError, false)
  const image = result.content.find((p) => p.type === "image")
  assert.equal(image.mimeType, "image/png")
  assert.ok(Buffer.from(image.data, "base64").subarray(1, 4).toString() === "PNG", "the PNG itself")
})

test("call: a tool that returns isError prints its text on stderr, exit 1", T, async () => {
  const pidFile = tmpFile("fix.pid")
  const config = tmpConfig({ mcpServers: { fix: { command: nodeFixture("stdio-server", "--tools", "fail,ping"), env: { PID_FILE: pidFile } } } })
  const r = await cli(["call", config, "fix", "fail"])
  assert.equal(r.code, 1)
  assert.equal(r.stdout, "")
  assert.equal(r.stderr, "first problem\n\nsecond problem\n")
  const json = await cli(["call", config, "fix", "fail", "--json"])
  assert.equal(json.code, 1)
  assert.deepEqual(JSON.parse(json.stdout), {
    content: [
      { type: "text", text: "first problem" },
      { type: "text", text: "   " },
      { type: "text", text: "second problem" },
    ],
    isError: true,
  })
  const pid = readPid(pidFile)
  assert.ok(pid)
  assert.equal(isAlive(pid), false, "the server is closed after the call")
})

test("call: an unknown tool or server is exit 2 naming the close matches; an unreachable server is exit 3", T, async () => {
  const config = tmpConfig({ mcpServers: { everything, off: { command: "x", disabled: true }, gone: { command: ["/nonexistent-toolnexus-call-binary"] } } })
  const tool = await cli(["call", config, "everything", "ehco"])
  assert.equal(tool.code, 2)
  assert.equal(tool.stdout, "")
  assert.equal(tool.stderr, 'toolnexus call: server "everything" has no tool "ehco"; did you mean "echo"?\n')
  const far = await cli(["call", config, "everything", "zzzzzzzzzz"])
  assert.equal(far.code, 2)
  assert.match(far.stderr, /has no tool "zzzzzzzzzz"; it has echo, .*get-tiny-image/)

  const server = await cli(["call", config, "everythin", "echo"])
  assert.equal(server.code, 2)
  assert.equal(server.stderr, 'toolnexus call: no server named "everythin" (did you mean "everything"?)\n')
  const disabled = await cli(["call", config, "off", "echo"])
  assert.equal(disabled.code, 2)
  assert.match(disabled.stderr, /server "off" is disabled/)

  const unreachable = await cli(["call", config, "gone", "echo"])
  assert.equal(unreachable.code, 3)
  assert.match(unreachable.stderr, /^toolnexus call: cannot reach "gone": cannot start .*nonexistent-toolnexus-call-binary/)

  const badArgs = await cli(["call", config, "everything", "echo", "--args", "{nope"])
  assert.equal(badArgs.code, 2)
  assert.match(badArgs.stderr, /--args is not valid JSON/)
  const notPair = await cli(["call", config, "everything", "echo", "a=1", "loose"])
  assert.equal(notPair.code, 2)
  assert.match(notPair.stderr, /argument "loose" is not key=value/)
})

test("call --json prints the result as the server sent it, _meta included; execute's result carries _meta", T, async () => {
  const fix = { command: nodeFixture("stdio-server", "--tools", "meta,mixed") }
  const config = tmpConfig({ mcpServers: { fix } })
  const json = await cli(["call", config, "fix", "meta", "--json"])
  assert.equal(json.code, 0, json.stderr)
  const sent = {
    content: [{ type: "text", text: "with meta" }],
    structuredContent: { n: 1 },
    isError: false,
    _meta: { "example.com/trace": "t-1", nested: { ok: true } },
  }
  assert.deepEqual(JSON.parse(json.stdout), sent)
  const text = await cli(["call", config, "fix", "meta"])
  assert.deepEqual([text.code, text.stdout, text.stderr], [0, "with meta\n", ""])

  const source = await toolnexus.loadMcp({ mcpServers: { fix } })
  try {
    const result = await source.tools.find((t) => t.name === "fix_meta").execute({})
    assert.deepEqual(result._meta, sent._meta)
    const mixed = await source.tools.find((t) => t.name === "fix_mixed").execute({})
    assert.equal(mixed._meta, undefined, "no _meta when the server sent none")
    // The CLI's summary is the library's: text in place, the image described between.
    assert.equal(toolnexus.describeContent(mixed.content), "one\n[image image/png, 8 B]\ntwo")
  } finally {
    await source.close()
  }
})

test("describeContent: each kind of part in words; a bad argument is a TypeError, not a crash", () => {
  const { describeContent } = toolnexus
  assert.equal(
    describeContent([
      { type: "text", text: "hello" },
      { type: "audio", data: "A".repeat(4000), mimeType: "audio/wav" },
      { type: "resource", resource: { uri: "file:///a.txt", text: "inside" } },
      { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA" } },
      { type: "resource_link", uri: "file:///c", name: "c" },
      { type: "surprise" },
    ]),
    "hello\n[audio audio/wav, 3.0 kB]\n[resource file:///a.txt]\ninside\n[resource file:///b.bin]\n[resource link c: file:///c]\n[surprise]",
  )
  assert.equal(describeContent([]), "")
  const circular = [{ type: "text" }]
  circular[0].self = circular
  assert.throws(() => describeContent(circular), { name: "TypeError", message: /circular/ })
})
