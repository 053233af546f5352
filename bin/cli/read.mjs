// `toolnexus read [<config>] <server> <uri> [--json]`: connect one server, read one resource,
// print its contents, close.
import { ArgumentError, tn } from "./inventory.mjs"
import { isFile, withServer } from "./call.mjs"
import { ELICIT_HELP } from "./elicit.mjs"
import { oneOffHelp, oneOffOptionsHelp, oneOffTarget } from "./oneoff.mjs"

export const READ_HELP = `Usage: toolnexus read [<config>] <server> <uri> [--json] [--timeout ms]
       toolnexus read --stdio "<command line>" <uri> [options]
       toolnexus read <http(s)://url> <uri> [--header "Name: value" …] [options]

Connects only <server> of <config> (without <config>, of the client configs found: see
\`toolnexus configs\`), reads the resource <uri> once (resources/read) and closes;
nothing is left running. Any URI the server serves can be read, listed or not (a
resource template's URI with its variables filled in, say); \`toolnexus list\` shows
the listed ones.

${oneOffHelp("read", "<uri> ")}

Prints each text part as it is; a binary part is summarised ([blob image/png, 4.0 kB]).

${ELICIT_HELP}

Options:
  --json               print the whole MCP result ({ contents: [{ uri, mimeType?, text | blob }] })
  --timeout ms         bound on connecting and on the read (default: the server's timeout)
  --no-browser         print a URL a server asks to open instead of opening the browser
${oneOffOptionsHelp(23)}
  -h, --help           show this help

Exit status: 0 success, 1 the server answered with an error (its message on stderr),
2 usage or config error (an unknown server), 3 the server could not be reached.
`

/**
 * [config?] server uri: two positionals are a server and a URI, unless the first is a file.
 * With a one-off `target` only the URI is left.
 */
export function splitReadArgs(positionals, target = null) {
  if (target) {
    if (positionals.length === 0) throw new ArgumentError("toolnexus read: missing <uri>")
    if (positionals.length > 1) throw new ArgumentError(`toolnexus read: unexpected argument "${positionals[1]}" (a one-off target takes no <config> or <server>)`)
    return { server: target.name, uri: positionals[0] }
  }
  if (positionals.length === 2 && isFile(positionals[0])) throw new ArgumentError("toolnexus read: missing <uri>")
  const [config, server, uri] = positionals.length === 3 ? positionals : [undefined, ...positionals]
  return { config, server, uri }
}

/** A size as the library writes it: `3 B`, `1.2 kB`, `4.0 MB`. */
const size = (bytes) => (bytes < 1000 ? `${bytes} B` : bytes < 1e6 ? `${(bytes / 1000).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`)

/** A resource's contents in words: text as it is, a blob as `[blob image/png, 4.0 kB]`. */
export function describeContents(contents) {
  return contents
    .map((part) => {
      if (typeof part.text === "string") return part.text
      if (typeof part.blob === "string") return `[blob ${part.mimeType ?? "application/octet-stream"}, ${size(Buffer.from(part.blob, "base64").length)}]`
      return tn.describeContent([{ type: "resource", resource: part }])
    })
    .join("\n")
}

export async function read({ positionals, values }, { signal }) {
  const target = oneOffTarget("read", positionals, values)
  const { config, server, uri } = splitReadArgs(target?.positionals ?? positionals, target)
  return withServer("read", { config, server, servers: target?.servers, values, signal }, async (source, elicitation) => {
    const opts = {}
    if (values.timeout !== undefined) opts.timeout = values.timeout
    if (signal) opts.signal = signal
    const result = await source.readResource(server, uri, opts)
    elicitation.close()
    if (values.json) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
      return 0
    }
    const text = describeContents(Array.isArray(result.contents) ? result.contents : [])
    process.stdout.write(text.endsWith("\n") || text === "" ? text : `${text}\n`)
    return 0
  })
}
