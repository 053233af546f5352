// `toolnexus read [<config>] <server> <uri> [--json]`: connect one server, read one resource,
// print its contents, close.
import { ArgumentError, tn } from "./inventory.mjs"
import { isFile, withServer } from "./call.mjs"

export const READ_HELP = `Usage: toolnexus read [<config>] <server> <uri> [--json] [--timeout ms]

Connects only <server> of <config> (without <config>, of the client configs found: see
\`toolnexus configs\`), reads the resource <uri> once (resources/read) and closes;
nothing is left running. Any URI the server serves can be read, listed or not (a
resource template's URI with its variables filled in, say); \`toolnexus list\` shows
the listed ones.

Prints each text part as it is; a binary part is summarised ([blob image/png, 4.0 kB]).

Options:
  --json        print the whole MCP result ({ contents: [{ uri, mimeType?, text | blob }] })
  --timeout ms  bound on connecting and on the read (default: the server's timeout)
  -h, --help    show this help

Exit status: 0 success, 1 the server answered with an error (its message on stderr),
2 usage or config error (an unknown server), 3 the server could not be reached.
`

/** [config?] server uri: two positionals are a server and a URI, unless the first is a file. */
export function splitReadArgs(positionals) {
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
  const { config, server, uri } = splitReadArgs(positionals)
  return withServer("read", { config, server, values, signal }, async (source) => {
    const opts = {}
    if (values.timeout !== undefined) opts.timeout = values.timeout
    if (signal) opts.signal = signal
    const result = await source.readResource(server, uri, opts)
    if (values.json) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
      return 0
    }
    const text = describeContents(Array.isArray(result.contents) ? result.contents : [])
    process.stdout.write(text.endsWith("\n") || text === "" ? text : `${text}\n`)
    return 0
  })
}
