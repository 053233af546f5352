// `toolnexus prompt [<config>] <server> <name> [key=value …] [--args json] [--json]`: connect one
// server, get one prompt with its arguments filled in, print its messages, close.
import { UsageError, tn } from "./inventory.mjs"
import { callArguments, missingHint, splitCallArgs, withServer } from "./call.mjs"
import { ELICIT_HELP } from "./elicit.mjs"
import { oneOffHelp, oneOffOptionsHelp, oneOffTarget } from "./oneoff.mjs"

export const PROMPT_HELP = `Usage: toolnexus prompt [<config>] <server> <name> [key=value …] [--args '<json>'] [--json]
       toolnexus prompt --stdio "<command line>" <name> [key=value …] [options]
       toolnexus prompt <http(s)://url> <name> [key=value …] [--header "Name: value" …] [options]

Connects only <server> of <config> (without <config>, of the client configs found: see
\`toolnexus configs\`), gets its prompt <name> once (prompts/get) and closes; nothing is
left running. \`toolnexus list\` shows each server's prompts and their arguments.

${oneOffHelp("prompt", "<name> [key=value …] ")}

Arguments: each key=value sets one argument, taken as a string (prompt arguments are
strings: n=3 is "3"). --args gives a JSON object of string arguments; key=value pairs
are applied on top of it.

Prints the prompt's description, if it has one, then each message as
"user: <text>" or "assistant: <text>"; images, audio and resources are summarised
([image image/png, 1.2 kB]). A prompt the server does not list is named with the
closest prompts it has.

${ELICIT_HELP}

Options:
  --args json          the arguments as one JSON object of strings
  --json               print the whole MCP result ({ description?, messages: [{ role, content }] })
  --timeout ms         bound on connecting and on the request (default: the server's timeout)
  --no-browser         print a URL a server asks to open instead of opening the browser
${oneOffOptionsHelp(23)}
  -h, --help           show this help

Exit status: 0 success, 1 the server answered with an error (its message on stderr),
2 usage or config error (an unknown server or prompt), 3 the server could not be reached.
`

/** One message in words: `role: text`, non-text content summarised by the library. */
function messageLine(message) {
  const content = message?.content
  const text = content?.type === "text" ? content.text : tn.describeContent(content ? [content] : [])
  return `${message?.role ?? "user"}: ${text}`
}

export async function prompt({ positionals, values }, { signal }) {
  const target = oneOffTarget("prompt", positionals, values)
  const { config, server, tool: name, pairs } = splitCallArgs(target?.positionals ?? positionals, "prompt", "<prompt>", target)
  const args = callArguments(values.args, pairs, "prompt", true)
  for (const [key, value] of Object.entries(args)) {
    if (typeof value === "number" || typeof value === "boolean") args[key] = String(value)
    else if (typeof value !== "string") throw new UsageError(`toolnexus prompt: argument "${key}" must be a string (prompt arguments are strings)`)
  }
  return withServer("prompt", { config, server, servers: target?.servers, values, signal }, async (source, elicitation) => {
    const listed = source.prompts.filter((p) => p.server === server).map((p) => p.name)
    if (!listed.includes(name)) {
      process.stderr.write(`toolnexus prompt: server "${server}" has no prompt "${name}"${missingHint(name, listed, "; it has no prompts")}\n`)
      return 2
    }
    const opts = {}
    if (values.timeout !== undefined) opts.timeout = values.timeout
    if (signal) opts.signal = signal
    const result = await source.getPrompt(server, name, args, opts)
    elicitation.close()
    if (values.json) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
      return 0
    }
    const lines = []
    if (typeof result.description === "string" && result.description !== "") lines.push(result.description)
    for (const message of Array.isArray(result.messages) ? result.messages : []) lines.push(messageLine(message))
    process.stdout.write(lines.length > 0 ? `${lines.join("\n")}\n` : "")
    return 0
  })
}
