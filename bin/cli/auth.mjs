// `toolnexus auth <config> <name>`: authorise a remote server by OAuth once, so `list`, `serve`
// and every agent using the default token store can use it; `--list` shows what is stored
// (never a token), `--logout <name>` forgets it.
import { spawn } from "node:child_process"
import { UsageError, readConfig, tn } from "./inventory.mjs"

export const AUTH_HELP = `Usage: toolnexus auth <config> <name> [--no-browser] [--timeout ms]
       toolnexus auth --list
       toolnexus auth --logout <name|url>

Authorises the remote server <name> of <config> by OAuth: opens the authorisation page in
the system browser (or, with --no-browser, prints its URL and waits), receives the answer
on a 127.0.0.1 redirect listener, stores the tokens, and prints who it authorised as.
Tokens are kept in the user's config directory (on Linux $XDG_CONFIG_HOME/toolnexus,
else ~/.config/toolnexus), in a file only its owner can read, and refreshed as they expire.
An entry whose auth signs in as a machine (grant "client_credentials" or "jwt-bearer", or
enterprise) needs no browser: its grant runs once and its token is stored.

Options:
  --no-browser     print the authorisation URL instead of opening a browser
  --timeout ms     give up after this long (the authorisation itself waits at most 5 minutes)
  --list           show the stored credentials: server, issuer, client, scopes, expiry
  --logout <name>  forget the credentials stored for a server name or URL
  -h, --help       show this help

Exit status: 0 authorised (or listed, or forgotten), 1 authorisation failed or nothing
to forget, 2 usage or config error.
`

/** `toolnexus auth <config> <name>` as a user retypes it: the path quoted only when it must be. */
export function authCommand(config, name) {
  const word = (w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`)
  return `toolnexus auth ${word(config)} ${word(name)}`
}

/** A failure reason with the config the user ran `list` on in place of the library's placeholder. */
export function withConfig(reason, config) {
  if (config === undefined) return reason
  return reason.replace(/toolnexus auth <config> (\S+)"/, (_, name) => `${authCommand(config, name)}"`)
}

/**
 * The program and arguments that open `url` in the system browser on `platform`, or null when
 * `url` is not an http(s) URL (another scheme could start any program). No shell runs them: on
 * Windows `cmd /c start` would read `&` in a query as a second command, so the URL goes to
 * `rundll32 url.dll,FileProtocolHandler` as one argument; macOS has `open`, others `xdg-open`.
 * The URL handed on is the parsed one (`new URL(url).href`).
 */
export function browserCommand(url, platform = process.platform) {
  let parsed
  try {
    parsed = new URL(String(url))
  } catch {
    return null
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null
  const href = parsed.href
  if (platform === "win32") return ["rundll32", ["url.dll,FileProtocolHandler", href]]
  if (platform === "darwin") return ["open", [href]]
  return ["xdg-open", [href]]
}

/**
 * Opens `url` in the system browser, without a shell; failures are ignored (the URL is printed
 * anyway). Returns false when the URL is not one to open (not http or https).
 */
export function openBrowser(url) {
  const command = browserCommand(url)
  if (command === null) return false
  try {
    const child = spawn(command[0], command[1], { stdio: "ignore", detached: true, shell: false, windowsHide: true })
    child.on("error", () => {})
    child.unref()
  } catch {}
  return true
}

function describe(credential) {
  const expires = credential.expiresAt ? new Date(credential.expiresAt).toISOString() : "no expiry given"
  const scopes = credential.scopes?.length ? credential.scopes.join(" ") : "(no scopes)"
  const who = credential.subject ? `  as ${credential.subject}` : ""
  return (
    `${credential.server ?? "?"}  ${credential.url}${who}\n` +
    `  issuer ${credential.issuer ?? "unknown"} · client ${credential.clientId ?? "unknown"} · ${scopes}\n` +
    `  token expires ${expires}${credential.refreshable ? " · refreshable" : ""}\n`
  )
}

export async function auth({ positionals, values }, { signal }) {
  const out = process.stdout
  if (values.list) {
    if (positionals.length > 0) throw new UsageError("toolnexus auth --list takes no arguments")
    const stored = tn.storedCredentials()
    if (stored.length === 0) out.write(`no stored credentials (${tn.credentialsPath()})\n`)
    for (const credential of stored) out.write(describe(credential))
    return 0
  }
  if (values.logout !== undefined) {
    if (positionals.length > 0) throw new UsageError("toolnexus auth --logout takes only a server name or URL")
    const removed = tn.forgetCredentials(values.logout)
    out.write(removed > 0 ? `forgot the credentials of ${values.logout}\n` : `no stored credentials for ${values.logout}\n`)
    return removed > 0 ? 0 : 1
  }
  if (positionals.length !== 2) throw new UsageError("toolnexus auth: expected <config> <name> (or --list, --logout <name>)")
  const [config, name] = positionals
  const servers = readConfig(config)
  const entry = servers[name]
  if (!entry) throw new UsageError(`toolnexus auth: ${config} has no server named "${name}"`)
  if (entry.type !== "remote") throw new UsageError(`toolnexus auth: server "${name}" is not a remote server; it needs no OAuth`)
  // A fresh authorisation: what was stored before (another account, fewer scopes) goes.
  tn.forgetCredentials(entry.url)
  const authorize = async (url) => {
    if (values["no-browser"]) {
      out.write(`Open this URL to authorise ${name}:\n${url}\nwaiting for the authorisation…\n`)
    } else {
      openBrowser(url)
      out.write(`Opened the browser to authorise ${name}. If it did not open, visit:\n${url}\n`)
    }
  }
  const opts = { authorize, signal }
  if (values.timeout !== undefined) opts.deadline = values.timeout
  const inventory = await tn.listMcpTools({ mcpServers: { [name]: entry } }, opts)
  if (inventory.status[name] !== "connected") {
    process.stderr.write(`toolnexus auth: ${name}: ${withConfig(inventory.errors[name] ?? "failed", config)}\n`)
    return 1
  }
  const stored = tn.storedCredentials().find((c) => c.server === name || c.url === entry.url)
  if (!stored) {
    out.write(`${name} connected without OAuth: nothing to store\n`)
    return 0
  }
  const who = stored.subject ?? `client ${stored.clientId} at ${stored.issuer}`
  out.write(`authorised ${name} as ${who} (${inventory.tools[name].length} tools)\n`)
  return 0
}
