// The client under test for the conformance suite's client scenarios, built on `loadMcp`: what an
// agent host using this package does. The suite's runner starts it as
// `<command> <server-url>` with MCP_CONFORMANCE_SCENARIO naming the scenario,
// MCP_CONFORMANCE_PROTOCOL_VERSION the spec version it runs at, and, for some scenarios,
// MCP_CONFORMANCE_CONTEXT (JSON) carrying test data.
//
// It connects through `loadMcp` (which lists the tools), makes the tool calls the scenario asks
// for (from the suite's scenario descriptions and its reference client), prints each result, and
// exits non-zero when the server could not be used or a call the scenario needs failed.
import { loadMcp, sanitize } from "toolnexus"

const serverUrl = process.argv.at(-1)
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""
const protocol = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {}

// The calls each scenario needs once the tools are listed, as [original tool name, arguments].
const byScenario = {
  tools_call: () => [["add_numbers", { a: 2, b: 3 }]],
  "sse-retry": () => [["test_reconnection", {}]],
  "elicitation-sep1034-client-defaults": () => [["test_client_elicitation_defaults", {}]],
  // The schema echoed is the one loadMcp hands the agent: preservation is judged on that.
  "json-schema-2020-12-preservation": (listed) => {
    const focal = listed("json_schema_2020_12_tool")
    if (!focal) throw new Error("the focal tool json_schema_2020_12_tool was not listed")
    return [["json_schema_echo", { schema: focal.inputSchema }]]
  },
  "sep-2322-client-request-state": () =>
    ["test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"].map(
      (name) => [name, {}],
    ),
}
// SEP-2243: every tool the client kept is called (invalid ones must not have been listed at all).
const callEveryTool = new Set(["http-standard-headers", "http-invalid-tool-headers"])

// An elicitation is accepted with no fields filled in: the schema's defaults must complete it
// (the SEP-1034 client scenario says "please accept with defaults").
const waitFor = async (request) => {
  console.log(`elicitation: ${JSON.stringify(request)}`)
  return { ok: true, data: {} }
}

// OAuth: the suite's authorisation server approves at once, so fetching the authorisation URL
// follows its redirect to toolnexus's loopback listener, as a browser would. Tokens stay in
// memory (never the user's config directory). A pre-registered client comes from the context;
// the Client ID Metadata Document URL is the one the suite expects a hosting app to give.
const authorize = async (url) => {
  console.log(`authorize: ${new URL(url).origin}`)
  await fetch(url)
}
const tokens = new Map()
const tokenStore = {
  get: async (key) => tokens.get(key),
  set: async (key, record) => void tokens.set(key, record),
  delete: async (key) => void tokens.delete(key),
}
// The auth extension scenarios each sign in as a machine, with the context's secrets handed over
// the way a deployment would: through environment variables the config names (`${VAR}`,
// `…Env`), never in the config's text. Everything else is the authorisation-code flow.
const secret = (name, value) => {
  process.env[name] = value
  return `\${${name}}`
}
const machineAuth = {
  "auth/client-credentials-basic": () => ({
    grant: "client_credentials",
    clientId: context.client_id,
    clientSecret: secret("CONFORMANCE_CLIENT_SECRET", context.client_secret),
  }),
  "auth/client-credentials-jwt": () => ({
    grant: "client_credentials",
    clientId: context.client_id,
    privateKey: secret("CONFORMANCE_PRIVATE_KEY", context.private_key_pem),
    signingAlgorithm: context.signing_algorithm,
  }),
  "auth/enterprise-managed-authorization": () => {
    process.env.CONFORMANCE_ID_TOKEN = context.idp_id_token
    return {
      clientId: context.client_id,
      clientSecret: secret("CONFORMANCE_CLIENT_SECRET", context.client_secret),
      enterprise: {
        idpIssuer: context.idp_issuer,
        idpTokenEndpoint: context.idp_token_endpoint,
        idpClientId: context.idp_client_id,
        idTokenEnv: "CONFORMANCE_ID_TOKEN",
      },
    }
  },
  // WIF_ASSERTION picks the negative examples' tokens (wrong_audience_jwt, expired_jwt).
  "auth/wif-jwt-bearer": () => {
    process.env.CONFORMANCE_WORKLOAD_TOKEN = context[process.env.WIF_ASSERTION ?? "valid_jwt"]
    return { grant: "jwt-bearer", clientId: context.client_id, assertionEnv: "CONFORMANCE_WORKLOAD_TOKEN" }
  },
}
const auth = machineAuth[scenario]?.() ?? { clientMetadataUrl: "https://conformance-test.local/client-metadata.json" }
if (!machineAuth[scenario]) {
  if (context.client_id) auth.clientId = context.client_id
  if (context.client_secret) auth.clientSecret = context.client_secret
}

const server = { type: "streamable-http", url: serverUrl, timeout: 10_000, auth }
if (protocol) server.protocol = protocol
const source = await loadMcp({ mcpServers: { conformance: server } }, { waitFor, authorize, tokenStore })
let failed = false
try {
  if (source.status.conformance !== "connected") {
    console.error(`server not usable: ${source.status.conformance}: ${source.errors.conformance ?? ""}`)
    failed = true
  } else {
    console.log(`tools: ${source.tools.map((t) => t.name).join(", ") || "(none)"}`)
    const listed = (name) => source.tools.find((t) => t.name === `conformance_${sanitize(name)}`)
    const calls = Array.isArray(context.toolCalls)
      ? context.toolCalls.map((c) => [c.name, c.arguments ?? {}])
      : (byScenario[scenario]?.(listed) ??
        // The auth scenarios' mock serves one tool, `test-tool`, behind the authorisation.
        (scenario.startsWith("auth/") && listed("test-tool") ? [["test-tool", {}]] : []))
    const planned = callEveryTool.has(scenario)
      ? source.tools.map((tool) => [tool.name, tool, {}])
      : calls.map(([name, args]) => [name, listed(name), args])
    // The skills extension (SEP-2640): the skills are listed while connecting, and nothing is
    // read ("no-prefetch"); the verify scenarios then load the listed skill (its SKILL.md read and
    // checked: size, digest, frontmatter), and only if that succeeds read a file of it. A refused
    // load fails the client (the suite allows that exit).
    if (scenario.startsWith("sep-2640-client-")) {
      console.log(`skills: ${source.skills.map((s) => s.uri).join(", ") || "(none)"}`)
      if (scenario !== "sep-2640-client-no-prefetch") {
        for (const skill of source.skills) {
          try {
            const loaded = await skill.load()
            console.log(`loaded ${loaded.uri}: ${loaded.description}`)
            for (const file of loaded.files === "dynamic" ? [] : loaded.files.filter((f) => f.path !== "SKILL.md")) {
              console.log(`read ${(await loaded.read(file.path)).uri}`)
            }
          } catch (error) {
            console.error(`skill ${skill.uri}: ${error.message}`)
            failed = true
          }
        }
      }
    }
    for (const [name, tool, args] of planned) {
      if (!tool) {
        console.error(`tool ${name} was not listed`)
        failed = true
        continue
      }
      const result = await tool.execute(args)
      console.log(`${name} -> ${JSON.stringify(result)}`)
      if (result.isError) failed = true
    }
  }
} finally {
  await source.close()
}
process.exitCode = failed ? 1 : 0
