// What the conformance fixture's tools share: media, the schemas the scenarios check, the
// capability lookup on `ctx`, and the elicitation and sampling requests they make.

// A valid WAV: 8 kHz, 8-bit mono, 8 samples of silence.
export function wavBase64() {
  const samples = Buffer.alloc(8, 0x80)
  const header = Buffer.alloc(44)
  header.write("RIFF", 0)
  header.writeUInt32LE(36 + samples.length, 4)
  header.write("WAVEfmt ", 8)
  header.writeUInt32LE(16, 16) // fmt chunk size
  header.writeUInt16LE(1, 20) // PCM
  header.writeUInt16LE(1, 22) // channels
  header.writeUInt32LE(8000, 24) // sample rate
  header.writeUInt32LE(8000, 28) // byte rate
  header.writeUInt16LE(1, 32) // block align
  header.writeUInt16LE(8, 34) // bits per sample
  header.write("data", 36)
  header.writeUInt32LE(samples.length, 40)
  return Buffer.concat([header, samples]).toString("base64")
}

// What a tool needs of `ctx` (issue 10's API). Absent in this build, the call fails with a reason
// that names it, and the scenario's failure says why.
export function capability(ctx, name) {
  const fn = ctx?.[name]
  if (typeof fn !== "function") {
    throw new Error(`ctx.${name} is not available in this toolnexus build (issue 10)`)
  }
  return fn.bind(ctx)
}

export const noArgs = { type: "object", properties: {} }

// SEP-1613 / SEP-2106: the listing must keep every keyword of this schema as given.
export const JSON_SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: {
      $anchor: "addressDef",
      type: "object",
      properties: { street: { type: "string" }, city: { type: "string" } },
    },
  },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
}

export const SEP1034_DEFAULTS_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", description: "User name", default: "John Doe" },
    age: { type: "integer", description: "User age", default: 30 },
    score: { type: "number", description: "User score", default: 95.5 },
    status: {
      type: "string",
      description: "User status",
      enum: ["active", "inactive", "pending"],
      default: "active",
    },
    verified: { type: "boolean", description: "Verification status", default: true },
  },
  required: [],
}

export const SEP1330_ENUMS_SCHEMA = {
  type: "object",
  properties: {
    untitledSingle: {
      type: "string",
      description: "Select one option",
      enum: ["option1", "option2", "option3"],
    },
    titledSingle: {
      type: "string",
      description: "Select one option with titles",
      oneOf: [
        { const: "value1", title: "First Option" },
        { const: "value2", title: "Second Option" },
        { const: "value3", title: "Third Option" },
      ],
    },
    legacyEnum: {
      type: "string",
      description: "Select one option (legacy)",
      enum: ["opt1", "opt2", "opt3"],
      enumNames: ["Option One", "Option Two", "Option Three"],
    },
    untitledMulti: {
      type: "array",
      description: "Select multiple options",
      minItems: 1,
      maxItems: 3,
      items: { type: "string", enum: ["option1", "option2", "option3"] },
    },
    titledMulti: {
      type: "array",
      description: "Select multiple options with titles",
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: "value1", title: "First Choice" },
          { const: "value2", title: "Second Choice" },
          { const: "value3", title: "Third Choice" },
        ],
      },
    },
  },
  required: [],
}

export const askName = (message) => ({
  message,
  requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
})
export const confirmation = () => ({
  message: "Please confirm",
  requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
})
export const question = (text, maxTokens) => ({
  messages: [{ role: "user", content: { type: "text", text } }],
  maxTokens,
})
export const textOf = (result) => (Array.isArray(result.content) ? result.content[0] : result.content)?.text ?? "No response"

export async function elicitAndReport(ctx, params, label) {
  const answer = await capability(ctx, "elicit")(params)
  return `${label}: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`
}

/** Waits `ms`, or until `signal` fires (then rejects with its reason). */
export function sleepUnlessAborted(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true })
  })
}
