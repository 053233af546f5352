// `toolnexus add <server.json | registry name> [--config file] [--name n] …` and
// `toolnexus remove <name> [--config file]`: write (or take out) one server entry, in the config
// file's own dialect, keeping the rest of the file byte for byte (./config-edit.mjs).
//
// A package becomes a command: npm → `npx -y <id>@<version>`, pypi → `uvx <id>==<version>`,
// oci → `docker run -i --rm -e VAR… <image>`, nuget → `dnx <id>@<version> --yes --`, with the
// runtime and package arguments between. A package whose own transport is streamable-http or sse
// serves MCP over HTTP once started: an MCP config cannot both start a process and connect to
// it, so the entry written is the remote one (its URL), and the command that starts the server
// is printed for the user to run. A remote becomes a url with headers.
//
// Secrets (isSecret) are never written in clear unless --secret-values: they become the
// dialect's environment reference (`${VAR}`, `${env:VAR}`, `{env:VAR}`) and the command says
// which variables to set. With --secret-values their values come from --set, else (on a
// terminal) a hidden prompt. Any other value that is required and has neither a value nor a
// default comes from --set or a prompt, else is referenced the same way.
import fs from "node:fs"
import path from "node:path"
import { Writable } from "node:stream"
import readline from "node:readline/promises"
import { checkServerName, dialectOf, editConfigText, entryFor, readConfigFile, writeConfigFile } from "./config-edit.mjs"
import { configLocations } from "./discover.mjs"
import { ArgumentError, UsageError, messageOf } from "./inventory.mjs"
import { DEFAULT_REGISTRY, checkDocument, fromRegistry, readDocumentFile, registryBase } from "./registry.mjs"

export const ADD_HELP = `Usage: toolnexus add <server.json | registry name> [--config file] [--name n]
         [--package N | --remote] [--set KEY=VALUE …] [--secret-values] [--force]
         [--registry URL] [--dry-run]

Adds one MCP server to a config file, written in that file's own dialect (Claude-style
mcpServers, VS Code servers, opencode mcp, Zed context_servers): comments, order and
formatting of the rest of the file are kept byte for byte.

<server.json>    a server.json file (the MCP registry's format); it is checked against
                 the published schema and refused, with reasons, when it does not fit
<registry name>  looked up in the registry: an exact name (io.github.owner/server) gets
                 its latest version, else a search must find exactly one server

Packages become commands: npm → npx, pypi → uvx, oci → docker run, nuget → dnx (or the
package's runtimeHint), with its runtime and package arguments. A package that serves
HTTP itself is written as a remote entry, and the command to start it is printed.
Remotes become a url with headers.

Secrets are written as environment references (\${VAR}, \${env:VAR} in VS Code,
{env:VAR} in opencode), never in clear, and the command says which variables to set.

Options:
  --config file     the config to write (created when missing). Without it: the one MCP
                    client config found here (\`toolnexus configs\`); several is an error
  --name n          the server's name in the config (default: the last part of its
                    registry name)
  --package N       use the Nth package (from 1) when the server offers several ways to run
  --remote          use the server's remote (hosted) endpoint
  --set KEY=VALUE   a value for an input: an environment variable or header by name, an
                    argument by its name without dashes or its valueHint, a {variable};
                    repeated for an isRepeated argument (--set tag=a --set tag=b)
  --secret-values   write secret values in clear (from --set, or asked on a terminal)
  --force           replace a server of the same name
  --registry URL    the registry to look names up in (default: ${DEFAULT_REGISTRY})
  --timeout ms      bound on the registry lookup (default 15000)
  --dry-run         print the entry without writing the file
  -h, --help        show this help

Exit status: 0 written, 1 the registry could not be reached, 2 usage error (an invalid
server.json, a name already taken, an ambiguous config or registry name), 130 stopped
by Ctrl-C or Ctrl-D at a question (nothing written).
`

export const REMOVE_HELP = `Usage: toolnexus remove <name> [--config file] [--dry-run]

Removes the server <name> from a config file, keeping the rest of the file byte for byte.
Without --config: from the one MCP client config found here that defines it.

Options:
  --config file  the config to edit
  --dry-run      print what would be removed without writing the file
  -h, --help     show this help

The removed entry is printed with its environment and header values masked.

Exit status: 0 removed, 2 usage error (no such server, a name written twice, or several
configs define it).
`

/** How each registry type runs by default. */
const RUNTIMES = { npm: "npx", pypi: "uvx", oci: "docker", nuget: "dnx" }

/** Characters a shell would act on; values holding them are refused (clients may use a shell). */
const SHELL_META = /[;&|`<>\n\r\0]|\$\(/

/**
 * The pieces of a server.json that become a command line, bounded and shell-safe. The value is
 * never repeated back (it may be a secret): only the field and the offending character are.
 */
function checkArgText(text, where) {
  if (typeof text !== "string") throw new UsageError(`toolnexus add: ${where} must be a string`)
  if (text.length > 4096) throw new UsageError(`toolnexus add: ${where} is longer than 4096 characters`)
  const bad = SHELL_META.exec(text)
  if (bad) {
    const shown = JSON.stringify(bad[0])
    throw new UsageError(`toolnexus add: ${where} holds the shell character ${shown}; toolnexus add does not write such values (some clients run commands through a shell)`)
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(text)) throw new UsageError(`toolnexus add: ${where} holds control characters`)
}

/** Control characters a header value may not hold (a tab is allowed, as HTTP allows it). */
// eslint-disable-next-line no-control-regex
const HEADER_VALUE_BAD = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/

/** A header value: no line break, NUL or other control character (it would split or end the header). */
function checkHeaderValue(value, where) {
  if (typeof value !== "string") throw new UsageError(`toolnexus add: ${where} must be a string`)
  if (value.length > 8192) throw new UsageError(`toolnexus add: ${where} is longer than 8192 characters`)
  if (HEADER_VALUE_BAD.test(value)) throw new UsageError(`toolnexus add: ${where} holds a line break or another control character; a header value may not`)
}

/** Environment references of every dialect (`${VAR}`, `${env:VAR}`, `{env:VAR}`), which a client expands later. */
const REFERENCE = /\$\{(?:env:)?[A-Za-z_][A-Za-z0-9_]*\}|\{env:[A-Za-z_][A-Za-z0-9_]*\}/g

/**
 * Checks a URL by URL rules (not shell rules: `?a=1&b=2` is fine): http or https, no white space
 * or control characters, and it parses (with environment references standing for a word).
 */
function checkUrl(url, where) {
  if (typeof url !== "string" || url === "") throw new UsageError(`toolnexus add: ${where} must be a URL`)
  if (url.length > 4096) throw new UsageError(`toolnexus add: ${where} is longer than 4096 characters`)
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(url)) throw new UsageError(`toolnexus add: ${where} holds white space or control characters; a URL may not`)
  let parsed
  try {
    parsed = new URL(url.replace(REFERENCE, "x"))
  } catch {
    throw new UsageError(`toolnexus add: ${where} is not a valid URL`)
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new UsageError(`toolnexus add: ${where} must be an http or https URL`)
}

/** The authority (host and port, with any user) of a URL text, as written. */
const authorityOf = (url) => /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#\\]*)/.exec(url)?.[1]

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** `APIFY_MCP_SERVER_AUTHORIZATION`: an environment variable name for a value the entry refers to. */
const envName = (...parts) =>
  parts
    .join("_")
    .toUpperCase()
    .replace(/[^A-Z0-9_]+/g, "_")
    .replace(/^([0-9])/, "_$1")

/** Whether prompts can be shown: both ends are a terminal. */
const interactive = () => Boolean(process.stdin.isTTY && process.stderr.isTTY)

/** Asks one question on the terminal (stderr), hiding what is typed when `hidden`. */
async function ask(question, hidden) {
  let muted = false
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk)
      done()
    },
  })
  const rl = readline.createInterface({ input: process.stdin, output, terminal: true })
  try {
    const answer = rl.question(question)
    muted = hidden
    const value = await answer.catch((err) => {
      // Ctrl-C or Ctrl-D at a question: the whole command stops, as an interrupt would.
      if (err?.code !== "ABORT_ERR") throw err
      process.stderr.write("\n")
      throw Object.assign(new Error("toolnexus add: cancelled at a question; nothing was written"), { exitCode: 130 })
    })
    if (hidden) process.stderr.write("\n")
    return value
  } finally {
    rl.close()
  }
}

/**
 * Resolves inputs (environment variables, headers, arguments, {variables}) to strings: a fixed
 * `value`, a --set value, a default, a prompt, else an environment reference. Collects what the
 * user must set in `wanted`.
 */
class Inputs {
  constructor({ sets, secretValues, envRef, prefix }) {
    this.sets = sets
    this.secretValues = secretValues
    this.envRef = envRef
    this.prefix = prefix
    this.wanted = [] // [{ variable, about, secret }]
    this.secrets = [] // secret values written in clear (--secret-values), masked when printed
    this.shell = new Map() // secret values and references → the variable a shell command names
    this.ignored = [] // --set keys of secrets not written (no --secret-values)
  }

  /**
   * The value of `input` known to the user as `key`, or undefined when it is optional and has
   * none. `variable`: the environment variable a reference uses.
   */
  async resolve(input, key, variable, where) {
    const secret = input.isSecret === true
    let value = typeof input.value === "string" ? await this.expand(input.value, input.variables, where) : undefined
    if (value !== undefined) return value
    const set = this.sets.get(key)
    if (set !== undefined && secret && !this.secretValues) this.ignored.push(key)
    if (set !== undefined && (!secret || this.secretValues)) return this.keep(set, secret, variable)
    if (!secret && typeof input.default === "string") return input.default
    if (input.isRequired !== true && !secret) return undefined
    if (secret && input.isRequired !== true && !this.secretValues) {
      // An optional secret: referenced, so setting the variable is enough to use it.
      this.want(variable, input, secret)
      return this.reference(variable)
    }
    if ((this.secretValues || !secret) && interactive()) {
      const about = typeof input.description === "string" ? ` (${input.description.slice(0, 120)})` : ""
      // The reference named is the one this dialect writes (VS Code's ${env:VAR}, opencode's {env:VAR}).
      const answer = await ask(`${key}${about}${secret ? ", hidden" : ""}; empty for a ${this.envRef(variable)} reference: `, secret)
      if (answer !== "") return this.keep(answer, secret, variable)
    }
    if (secret && typeof input.default === "string" && this.secretValues) return this.keep(input.default, secret, variable)
    this.want(variable, input, secret)
    return this.reference(variable)
  }

  keep(value, secret, variable) {
    if (secret && value !== "") {
      this.secrets.push(value)
      if (variable !== undefined) this.shell.set(value, variable)
    }
    return value
  }

  /** The dialect's reference to `variable`, remembered for the shell command of an HTTP package. */
  reference(variable) {
    const ref = this.envRef(variable)
    this.shell.set(ref, variable)
    return ref
  }

  /** The variables of secrets given in clear, which a printed command names instead of their values. */
  secretVariables() {
    return [...new Set(this.secrets.map((s) => this.shell.get(s)).filter(Boolean))]
  }

  /**
   * `word` quoted for a POSIX shell, each secret value or environment reference in it written as
   * "${VAR}" (so a printed command shows no secret, and VS Code's ${env:VAR} becomes one a shell reads).
   */
  shellWord(word) {
    const known = [...this.shell.keys()].sort((a, b) => b.length - a.length)
    const quote = (lit) => (lit === "" ? "" : /^[\w@%+=:,./-]+$/.test(lit) ? lit : `'${lit.replaceAll("'", `'\\''`)}'`)
    let out = ""
    let rest = word
    while (rest !== "") {
      let at = -1
      let hit
      for (const k of known) {
        const i = rest.indexOf(k)
        if (i >= 0 && (at < 0 || i < at)) [at, hit] = [i, k]
      }
      if (at < 0) break
      out += `${quote(rest.slice(0, at))}"\${${this.shell.get(hit)}}"`
      rest = rest.slice(at + hit.length)
    }
    out += quote(rest)
    return out === "" ? "''" : out
  }

  /**
   * The values of a repeatable input (`isRepeated`): each `--set key=…` given, in order (several
   * --set of one key), else the one value `resolve` finds ([] when it is left out).
   */
  async resolveAll(input, key, variable, where) {
    const sets = this.sets.all(key)
    const secret = input.isSecret === true
    if (typeof input.value !== "string" && sets.length > 1 && (!secret || this.secretValues)) return sets.map((v) => this.keep(v, secret))
    const value = await this.resolve(input, key, variable, where)
    return value === undefined ? [] : [value]
  }

  /** `entry` as JSON with the secret values written in clear shown as "••••". */
  show(entry) {
    let text = JSON.stringify(entry, null, 2)
    // Longest first, and as a URL holds them (percent-encoded) too.
    const shown = [...new Set(this.secrets.flatMap((s) => [s, encodeURIComponent(s)]))].sort((a, b) => b.length - a.length)
    for (const secret of shown) text = text.replaceAll(JSON.stringify(secret).slice(1, -1), "••••")
    return text
  }

  want(variable, input, secret) {
    if (this.wanted.some((w) => w.variable === variable)) return
    this.wanted.push({ variable, about: typeof input.description === "string" ? input.description : "", secret })
  }

  /** `value` with each `{name}` of `variables` replaced; an unknown `{name}` stays as written. */
  async expand(value, variables, where) {
    if (variables === undefined || variables === null) return value
    let out = value
    for (const [name, variable] of Object.entries(variables)) {
      if (!out.includes(`{${name}}`)) continue
      const resolved = await this.resolve(variable, name, envName(this.prefix, name), `${where}.variables.${name}`)
      out = out.replaceAll(`{${name}}`, resolved ?? "")
    }
    return out
  }

  /**
   * A URL template with its `{name}`s filled: from `known` (name → value: a package's environment)
   * and from `variables` (resolved as inputs). A value goes in percent-encoded
   * (encodeURIComponent); in the host and port it may hold no `/`, `?`, `#`, `@`, `:`, `\` or white
   * space, and the host filled in must still fit the template's (only the variables' parts
   * differ). An environment reference stays as written, for the client to expand.
   */
  async expandUrl(template, variables, known, where) {
    if (typeof template !== "string") throw new UsageError(`toolnexus add: ${where}.url must be a string`)
    const values = new Map(Object.entries(known ?? {}))
    for (const [name, variable] of Object.entries(variables ?? {})) {
      if (!template.includes(`{${name}}`) || values.has(name)) continue
      values.set(name, (await this.resolve(variable, name, envName(this.prefix, name), `${where}.variables.${name}`)) ?? "")
    }
    const authority = authorityOf(template)
    const [aStart, aEnd] = authority === undefined ? [-1, -1] : [template.indexOf("://") + 3, template.indexOf("://") + 3 + authority.length]
    let out = ""
    let last = 0
    let hostPattern = ""
    let aLast = aStart
    for (const match of template.matchAll(/\{([^{}]+)\}/g)) {
      const [whole, name] = match
      if (!values.has(name)) continue
      const raw = values.get(name)
      const inAuthority = match.index >= aStart && match.index < aEnd
      const isReference = raw !== "" && raw.replace(REFERENCE, "") === ""
      let value = raw
      if (inAuthority && !isReference && (raw === "" || /[/?#@:\\%\s]/.test(raw))) {
        throw new UsageError(`toolnexus add: ${where}.url: the value of {${name}} goes in the host, so it may not be empty or hold "/", "?", "#", "@", ":", "\\", "%" or white space`)
      }
      if (!inAuthority && !isReference) value = encodeURIComponent(raw)
      if (inAuthority) {
        hostPattern += escapeRegExp(template.slice(aLast, match.index)) + (isReference ? escapeRegExp(raw) : "[^/?#@:\\\\\\s]+")
        aLast = match.index + whole.length
      }
      out += template.slice(last, match.index) + value
      last = match.index + whole.length
    }
    out += template.slice(last)
    if (authority !== undefined) {
      hostPattern += escapeRegExp(template.slice(aLast, aEnd))
      const filled = authorityOf(out)
      if (filled === undefined || !new RegExp(`^${hostPattern}$`, "i").test(filled)) {
        throw new UsageError(`toolnexus add: ${where}.url: the host filled in does not fit the template's host ${JSON.stringify(authority)}`)
      }
    }
    checkUrl(out, `${where}.url`)
    return out
  }

}

/**
 * Command-line words for one argument (positional or named); [] when it is left out. An
 * `isRepeated` argument takes each value given with `--set key=…` repeated: `--tag a --tag b`,
 * or for a positional one word each.
 */
async function argumentWords(arg, inputs, where) {
  if (arg.type === "positional") {
    const key = typeof arg.valueHint === "string" ? arg.valueHint : where
    const values = arg.isRepeated === true ? await inputs.resolveAll(arg, key, envName(inputs.prefix, key), where) : [await inputs.resolve(arg, key, envName(inputs.prefix, key), where)]
    const words = values.filter((v) => v !== undefined)
    for (const value of words) checkArgText(value, `${where}.value`)
    return words
  }
  checkArgText(arg.name, `${where}.name`)
  if (arg.name === "" || arg.name.includes(" ")) throw new UsageError(`toolnexus add: ${where}.name must be one flag, got ${JSON.stringify(arg.name)}`)
  const key = arg.name.replace(/^-+/, "")
  if (arg.format === "boolean") {
    const value = await inputs.resolve(arg, key, envName(inputs.prefix, key), where)
    return value === "true" || (value === undefined && arg.isRequired === true) ? [arg.name] : []
  }
  const values = arg.isRepeated === true ? await inputs.resolveAll(arg, key, envName(inputs.prefix, key), where) : [await inputs.resolve(arg, key, envName(inputs.prefix, key), where)]
  const words = []
  for (const value of values) {
    if (value === undefined) continue
    checkArgText(value, `${where}.value`)
    words.push(arg.name, value)
  }
  return words
}

async function argumentList(args, inputs, where) {
  const words = []
  for (const [i, arg] of (args ?? []).entries()) words.push(...(await argumentWords(arg, inputs, `${where}[${i}]`)))
  return words
}

/** The package's environment, each value resolved. */
async function packageEnv(pkg, inputs, where) {
  const env = {}
  for (const [i, variable] of (pkg.environmentVariables ?? []).entries()) {
    if (!ENV_NAME.test(variable.name)) throw new UsageError(`toolnexus add: ${where}.environmentVariables[${i}].name ${JSON.stringify(variable.name)} is not an environment variable name`)
    const value = await inputs.resolve(variable, variable.name, variable.name, `${where}.environmentVariables[${i}]`)
    if (value !== undefined) env[variable.name] = value
  }
  return env
}

/** Headers of a transport, each value resolved. */
async function headerMap(headers, inputs, where) {
  const out = {}
  for (const [i, header] of (headers ?? []).entries()) {
    if (!HEADER_NAME.test(header.name)) throw new UsageError(`toolnexus add: ${where}.headers[${i}].name ${JSON.stringify(header.name)} is not a header name`)
    const value = await inputs.resolve(header, header.name, envName(inputs.prefix, header.name), `${where}.headers[${i}]`)
    if (value !== undefined) {
      checkHeaderValue(value, `${where}.headers[${i}] (${header.name})`)
      out[header.name] = value
    }
  }
  return out
}

/** The command line that runs a package, and its environment. */
async function packageCommand(pkg, inputs, where) {
  const type = pkg.registryType
  if (type === "mcpb") throw new UsageError(`toolnexus add: ${where} is an MCPB bundle (a downloaded binary); toolnexus add writes only npm, pypi, oci and nuget packages`)
  const runtime = pkg.runtimeHint ?? RUNTIMES[type]
  if (runtime === undefined) throw new UsageError(`toolnexus add: ${where} has registryType ${JSON.stringify(type)} and no runtimeHint; toolnexus add knows npm, pypi, oci and nuget`)
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(runtime)) throw new UsageError(`toolnexus add: ${where}.runtimeHint ${JSON.stringify(runtime)} is not a command name`)
  const id = pkg.identifier
  checkArgText(id, `${where}.identifier`)
  if (id === "" || id.startsWith("-") || /\s/.test(id)) throw new UsageError(`toolnexus add: ${where}.identifier ${JSON.stringify(id)} is not a package name`)
  const version = pkg.version
  if (version !== undefined) {
    checkArgText(version, `${where}.version`)
    if (version.startsWith("-") || /\s/.test(version)) throw new UsageError(`toolnexus add: ${where}.version ${JSON.stringify(version)} is not a version`)
  }
  const env = await packageEnv(pkg, inputs, where)
  const runtimeArgs = await argumentList(pkg.runtimeArguments, inputs, `${where}.runtimeArguments`)
  const packageArgs = await argumentList(pkg.packageArguments, inputs, `${where}.packageArguments`)
  let command
  if (runtime === "npx") {
    const yes = runtimeArgs.includes("-y") || runtimeArgs.includes("--yes") ? [] : ["-y"]
    command = ["npx", ...yes, ...runtimeArgs, version ? `${id}@${version}` : id, ...packageArgs]
  } else if (runtime === "uvx") {
    command = ["uvx", ...runtimeArgs, version ? `${id}==${version}` : id, ...packageArgs]
  } else if (runtime === "docker") {
    // The image gets the variables the client sets for `docker` through `-e NAME`.
    const image = version && !/[:@][^/]*$/.test(id) ? `${id}:${version}` : id
    const fixed = ["-i", "--rm"].filter((flag) => !runtimeArgs.includes(flag))
    command = ["docker", "run", ...fixed, ...runtimeArgs, ...Object.keys(env).flatMap((name) => ["-e", name]), image, ...packageArgs]
  } else if (runtime === "dnx") {
    command = ["dnx", ...runtimeArgs, version ? `${id}@${version}` : id, "--yes", ...(packageArgs.length > 0 ? ["--", ...packageArgs] : [])]
  } else {
    command = [runtime, ...runtimeArgs, version ? `${id}@${version}` : id, ...packageArgs]
  }
  return { command, env }
}

/** What the server offers, numbered for --package N / --remote. */
function choices(doc) {
  const packages = Array.isArray(doc.packages) ? doc.packages : []
  const remotes = Array.isArray(doc.remotes) ? doc.remotes : []
  return { packages, remotes }
}

function describeChoices(doc) {
  const { packages, remotes } = choices(doc)
  const lines = packages.map((p, i) => `  --package ${i + 1}  ${p.registryType} ${p.identifier}${p.version ? ` ${p.version}` : ""}`)
  for (const r of remotes) lines.push(`  --remote     ${r.type} ${r.url}`)
  return lines.join("\n")
}

/** The canonical server (and notes) for the chosen package or remote of `doc`. */
async function canonicalOf(doc, values, inputs) {
  const { packages, remotes } = choices(doc)
  if (values.package !== undefined && values.remote) throw new ArgumentError("toolnexus add: --package and --remote exclude each other")
  const notes = []
  let pick
  if (values.package !== undefined) {
    const n = Number(values.package)
    if (!/^\d+$/.test(values.package) || n < 1 || n > packages.length) {
      throw new UsageError(`toolnexus add: --package must be 1${packages.length > 1 ? `-${packages.length}` : ""}, got "${values.package}"${packages.length === 0 ? ` (${doc.name} has no packages)` : ""}`)
    }
    pick = { package: packages[n - 1], where: `packages[${n - 1}]` }
  } else if (values.remote) {
    if (remotes.length === 0) throw new UsageError(`toolnexus add: ${doc.name} has no remote endpoint; it offers:\n${describeChoices(doc)}`)
    const i = Math.max(0, remotes.findIndex((r) => r.type === "streamable-http"))
    pick = { remote: remotes[i], where: `remotes[${i}]` }
  } else if (packages.length + remotes.length === 1) {
    pick = packages.length === 1 ? { package: packages[0], where: "packages[0]" } : { remote: remotes[0], where: "remotes[0]" }
  } else if (packages.length + remotes.length === 0) {
    throw new UsageError(`toolnexus add: ${doc.name} has neither packages nor remotes: nothing says how to run it`)
  } else {
    throw new UsageError(`toolnexus add: ${doc.name} offers several ways to run it; choose one:\n${describeChoices(doc)}`)
  }

  if (pick.remote) {
    const remote = pick.remote
    const url = await inputs.expandUrl(remote.url, remote.variables, {}, pick.where)
    const headers = await headerMap(remote.headers, inputs, pick.where)
    return { canonical: { type: "remote", url, transport: remote.type === "sse" ? "sse" : "streamable-http", headers }, notes }
  }
  const pkg = pick.package
  const { command, env } = await packageCommand(pkg, inputs, pick.where)
  const transport = pkg.transport ?? { type: "stdio" }
  if (transport.type === "stdio") return { canonical: { type: "local", command, env }, notes }
  // An HTTP package: the entry is the URL; the user starts the server.
  // {names} in a package's URL refer to its arguments and environment variables.
  const url = await inputs.expandUrl(transport.url, transport.variables, env, `${pick.where}.transport`)
  const headers = await headerMap(transport.headers, inputs, `${pick.where}.transport`)
  // The command to run, for a shell: secrets (given or not) as references to the variables
  // named, never in clear.
  const envText = Object.entries(env).map(([k, v]) => `${k}=${inputs.shellWord(v)} `).join("")
  const secretVariables = inputs.secretVariables()
  const setFirst = secretVariables.length > 0 ? ` (with ${secretVariables.join(", ")} set in its environment)` : ""
  notes.push(`This package serves MCP over HTTP (${transport.type}); an MCP config cannot start it, so start it yourself${setFirst} and keep it running:\n    ${envText}${command.map((w) => inputs.shellWord(w)).join(" ")}`)
  return { canonical: { type: "remote", url, transport: transport.type === "sse" ? "sse" : "streamable-http", headers }, notes }
}

/**
 * The `--set KEY=VALUE` pairs: `get(key)` the value (a key given twice is an error unless the
 * input is repeatable, see `all`), `all(key)` every value given, in order. A malformed pair is
 * refused without repeating it (it may be a secret).
 */
function parseSets(sets = []) {
  const map = new Map()
  for (const pair of sets) {
    const at = pair.indexOf("=")
    if (at <= 0) throw new ArgumentError(`toolnexus add: --set takes KEY=VALUE (one was given without a KEY before "=")`)
    const key = pair.slice(0, at)
    map.set(key, [...(map.get(key) ?? []), pair.slice(at + 1)])
  }
  return {
    get(key) {
      const values = map.get(key)
      if (values === undefined) return undefined
      if (values.length > 1) throw new UsageError(`toolnexus add: --set ${key} was given ${values.length} times, but ${key} takes one value`)
      return values[0]
    },
    all: (key) => map.get(key) ?? [],
  }
}

/** The config file to write: --config, else the single client config found here. */
function chooseConfig(config, name, command) {
  if (config !== undefined) return { file: config }
  const seen = new Set()
  const existing = configLocations().filter((l) => {
    // One file listed twice (a project folder that is also the home) counts once.
    const key = `${path.resolve(l.file)}\0${l.at.join("\0")}`
    if (seen.has(key)) return false
    seen.add(key)
    try {
      return fs.statSync(l.file).isFile()
    } catch {
      return false
    }
  })
  // ~/.claude.json's per-folder map counts only where it defines servers (as for `configs`).
  const found = existing.filter((l) => {
    if (l.scope !== "local") return true
    try {
      return Object.keys(readConfigFile(l.file, l.at).servers).length > 0 && (name === undefined || name in serversAt(l))
    } catch {
      return false
    }
  })
  const candidates = name === undefined ? found : found.filter((l) => name in serversAt(l))
  if (candidates.length === 1) return { file: candidates[0].file, at: candidates[0].at }
  const list = (found.length > 0 ? found : existing).map((l) => `  ${l.file} (${l.client}, ${l.scope})`).join("\n")
  if (name !== undefined && candidates.length === 0) {
    throw new UsageError(`toolnexus ${command}: no config found here defines "${name}"${list ? `; the configs here are:\n${list}` : ""}`)
  }
  if (candidates.length === 0) throw new UsageError(`toolnexus ${command}: no MCP client config found here; name the file to write with --config <file> (it is created when missing)`)
  const lines = candidates.map((l) => `  ${l.file} (${l.client}, ${l.scope})`).join("\n")
  throw new UsageError(`toolnexus ${command}: several MCP configs are here; choose one with --config <file>:\n${lines}`)
}

/** The raw servers of one location (at its own key path). */
function serversAt(location) {
  try {
    return readConfigFile(location.file, location.at).servers
  } catch {
    return {}
  }
}

/** Reads a config's text, or "" when it does not exist yet; a UsageError when it is not a file. */
function configText(file) {
  try {
    return fs.readFileSync(file, "utf8")
  } catch (err) {
    if (err.code === "ENOENT") return ""
    throw new UsageError(`toolnexus: cannot read ${file}: ${messageOf(err)}`)
  }
}

/** Prints the notes, one paragraph each. */
function printNotes(notes) {
  for (const note of notes) process.stdout.write(`note: ${note}\n`)
}

const DIALECT_NAMES = {
  mcpServers: "mcpServers",
  vscode: "VS Code servers",
  "vscode-settings": "VS Code settings mcp.servers",
  opencode: "opencode mcp",
  zed: "Zed context_servers",
}

export async function add({ positionals, values }, { signal }) {
  const [source] = positionals
  const sets = parseSets(values.set)
  let doc
  let shown = source
  // Registry names (io.github.owner/server) never end in .json.
  const looksLikeFile = fs.existsSync(source) || /\.json$/i.test(source)
  if (looksLikeFile) {
    doc = readDocumentFile(source)
  } else {
    const base = registryBase(values.registry)
    try {
      doc = await fromRegistry(base, source, { timeout: values.timeout ?? 15000, signal })
    } catch (err) {
      if (err instanceof UsageError || signal?.aborted) throw err
      process.stderr.write(`toolnexus add: ${messageOf(err)}\n`)
      return 1
    }
    shown = `the registry's ${typeof doc.name === "string" ? doc.name : source}`
  }
  checkDocument(doc, shown)

  const name = values.name ?? doc.name.slice(doc.name.lastIndexOf("/") + 1)
  try {
    checkServerName(name)
  } catch (err) {
    throw new UsageError(`toolnexus add: ${messageOf(err)}${values.name === undefined ? " (choose one with --name)" : ""}`)
  }
  const target = chooseConfig(values.config, undefined, "add")
  const text = configText(target.file)
  const dialect = dialectOf(text, target.file, target.at)
  const inputs = new Inputs({ sets, secretValues: values["secret-values"] === true, envRef: dialect.envRef, prefix: name })
  const { canonical, notes } = await canonicalOf(doc, values, inputs)
  let entry
  try {
    entry = entryFor(dialect, canonical)
  } catch (err) {
    throw new UsageError(`toolnexus add: ${messageOf(err)}`)
  }
  let edited
  try {
    edited = editConfigText(text, target.file, name, { add: entry, replace: values.force === true }, target.at ? { at: target.at } : {})
  } catch (err) {
    const clash = /already exists/.test(messageOf(err))
    throw new UsageError(`toolnexus add: ${messageOf(err)}${clash ? " (--force replaces it, or --name picks another name)" : ""}`)
  }
  if (!values["dry-run"]) writeConfigFile(target.file, edited.text)

  const out = process.stdout
  out.write(`${values["dry-run"] ? "would add" : "added"} "${name}" (${doc.name} ${doc.version}) to ${target.file} (${DIALECT_NAMES[dialect.name]}):\n`)
  out.write(`${inputs.show({ [name]: entry })}\n`)
  for (const key of inputs.ignored) notes.push(`--set ${key} was not written: it is a secret (add --secret-values to write it in clear).`)
  if (inputs.wanted.length > 0) {
    out.write(`set ${inputs.wanted.length === 1 ? "this variable" : "these variables"} in the environment the client starts with:\n`)
    for (const w of inputs.wanted) out.write(`  ${w.variable}${w.secret ? " (secret)" : ""}${w.about ? `  ${w.about}` : ""}\n`)
    if (dialect.name === "zed") notes.push(`Zed does not expand \${VAR} in its settings; toolnexus does. For Zed, put the values in the entry yourself.`)
  }
  printNotes([...notes, ...edited.notes])
  return 0
}

/**
 * An entry as printed by `remove`: the values of its environment and headers, and of its URL's
 * password and query, shown as "••••" (they are often tokens) unless they are only environment
 * references.
 */
function masked(entry) {
  if (!entry || typeof entry !== "object" || Array.isArray(entry)) return entry
  const hide = (v) => (typeof v === "string" && v !== "" && v.replace(REFERENCE, "") === "" ? v : "••••")
  const out = { ...entry }
  for (const key of ["env", "environment", "headers", "http_headers"]) {
    if (out[key] && typeof out[key] === "object" && !Array.isArray(out[key])) out[key] = Object.fromEntries(Object.entries(out[key]).map(([k, v]) => [k, hide(v)]))
  }
  for (const key of ["url", "serverUrl", "httpUrl"]) {
    if (typeof out[key] !== "string") continue
    try {
      const url = new URL(out[key])
      if (url.password) url.password = "xxxx"
      if (url.search) url.search = [...url.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=xxxx`).join("&")
      out[key] = url.password || url.search ? url.href : out[key]
    } catch {}
  }
  return out
}

export async function remove({ positionals, values }) {
  const [name] = positionals
  try {
    checkServerName(name)
  } catch (err) {
    throw new UsageError(`toolnexus remove: ${messageOf(err)}`)
  }
  const target = chooseConfig(values.config, values.config === undefined ? name : undefined, "remove")
  if (values.config !== undefined && !fs.existsSync(target.file)) throw new UsageError(`toolnexus remove: ${target.file} does not exist`)
  const text = configText(target.file)
  let edited
  let entry
  try {
    entry = readConfigFile(target.file, target.at).servers[name]
    edited = editConfigText(text, target.file, name, { remove: true }, target.at ? { at: target.at } : {})
  } catch (err) {
    throw new UsageError(`toolnexus remove: ${messageOf(err)}`)
  }
  if (!values["dry-run"]) writeConfigFile(target.file, edited.text)
  process.stdout.write(`${values["dry-run"] ? "would remove" : "removed"} "${name}" from ${target.file}:\n${JSON.stringify({ [name]: masked(entry) }, null, 2)}\n`)
  printNotes(edited.notes)
  return 0
}
