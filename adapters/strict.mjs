// OpenAI strict-mode JSON Schemas from MCP input schemas (shared by the framework adapters).
//
// Strict mode (OpenAI's `strict: true` function calling) accepts a subset of JSON Schema: every
// object lists all its properties in `required` and sets `additionalProperties: false`, every
// node says what it is (`type`, `anyOf`, `enum`, `const` or `$ref`), and a list of keywords is
// refused. `toStrictSchema` rewrites a schema into that subset: an optional property becomes a
// required one that also accepts `null` (and `stripNulls` turns those nulls back into absent
// properties before the tool is called), refused keywords are removed, `oneOf` becomes `anyOf`.

/** Keywords strict mode refuses: removed (their constraints are then the server's to check). */
const REFUSED = new Set([
  "$schema", "$id", "$comment", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor",
  "allOf", "not", "if", "then", "else", "dependencies", "dependentRequired", "dependentSchemas",
  "patternProperties", "propertyNames", "unevaluatedProperties", "minProperties", "maxProperties",
  "unevaluatedItems", "contains", "minContains", "maxContains", "uniqueItems", "prefixItems", "additionalItems",
  "minLength", "maxLength", "contentEncoding", "contentMediaType", "contentSchema",
  "default", "examples", "readOnly", "writeOnly", "deprecated",
])

/** The `format` values strict mode accepts on strings; others are removed. */
const FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"])

/** What a node of any value may be in strict mode (an empty schema `{}` accepts anything). */
const ANY_SCALAR = ["string", "number", "boolean", "null"]

const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value)
const isObjectSchema = (s) => s.type === "object" || (Array.isArray(s.type) && s.type.includes("object")) || (s.type === undefined && isObject(s.properties))

/** Whether `schema` (an original, non-strict one) already accepts `null`. */
function acceptsNull(schema) {
  if (schema === true) return true
  if (!isObject(schema)) return false
  if (schema.type === "null" || (Array.isArray(schema.type) && schema.type.includes("null"))) return true
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true
  if ("const" in schema && schema.const === null) return true
  for (const key of ["anyOf", "oneOf"]) if (Array.isArray(schema[key]) && schema[key].some(acceptsNull)) return true
  return false
}

/** `schema` made to accept `null` too. */
function nullable(schema) {
  if (acceptsNull(schema)) return schema
  const plainType = typeof schema.type === "string" && !("enum" in schema) && !("const" in schema)
  if (plainType) return { ...schema, type: [schema.type, "null"] }
  if (Array.isArray(schema.type) && !("enum" in schema) && !("const" in schema)) return { ...schema, type: [...schema.type, "null"] }
  if (Array.isArray(schema.anyOf) && Object.keys(schema).every((k) => k === "anyOf" || k === "description" || k === "title")) {
    return { ...schema, anyOf: [...schema.anyOf, { type: "null" }] }
  }
  const { description } = schema
  return description === undefined ? { anyOf: [schema, { type: "null" }] } : { description, anyOf: [schema, { type: "null" }] }
}

/** One schema node in strict form; `defaultValue` (removed keyword) is kept in the description. */
function strictNode(schema, root) {
  if (!root && (schema === true || !isObject(schema) || Object.keys(schema).length === 0)) return { type: ANY_SCALAR }
  const out = {}
  for (const [key, value] of Object.entries(schema)) {
    if (REFUSED.has(key)) continue
    if (key === "format" && !FORMATS.has(value)) continue
    if (key === "properties" || key === "required" || key === "additionalProperties") continue
    if (key === "oneOf" || key === "anyOf") {
      if (Array.isArray(value) && value.length > 0) out.anyOf = [...(out.anyOf ?? []), ...value.map((v) => strictNode(v, false))]
      continue
    }
    if (key === "items") {
      out.items = Array.isArray(value) ? strictNode(value[0] ?? {}, false) : strictNode(value, false)
      continue
    }
    if (key === "$defs" || key === "definitions") {
      if (isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, def]) => [name, strictNode(def, false)]))
      continue
    }
    out[key] = value
  }
  if ("default" in schema && schema.default !== undefined && schema.default !== null) {
    const note = `Default: ${JSON.stringify(schema.default)}.`
    out.description = typeof out.description === "string" && out.description.length > 0 ? `${out.description} (${note})` : note
  }
  if (root || isObjectSchema(schema)) {
    if (root || out.type === undefined) out.type = "object"
    const properties = isObject(schema.properties) ? schema.properties : {}
    const required = new Set(Array.isArray(schema.required) ? schema.required : [])
    out.properties = Object.fromEntries(
      Object.entries(properties).map(([name, prop]) => {
        const strict = strictNode(prop, false)
        return [name, required.has(name) ? strict : nullable(strict)]
      }),
    )
    out.required = Object.keys(out.properties)
    out.additionalProperties = false
  }
  // A node with siblings beside `anyOf` (a type, a description…): the siblings go into each branch
  // except descriptive ones, as strict mode allows only metadata next to `anyOf`.
  if (out.anyOf && Object.keys(out).some((k) => !["anyOf", "description", "title", "$defs", "definitions"].includes(k))) {
    const { anyOf, description, title, $defs, definitions, ...rest } = out
    const merged = { anyOf: anyOf.map((branch) => (isObject(branch) && !branch.$ref ? { ...rest, ...branch } : branch)) }
    return Object.assign(merged, description !== undefined && { description }, title !== undefined && { title }, $defs && { $defs }, definitions && { definitions })
  }
  if (out.type === undefined && !out.anyOf && !("enum" in out) && !("const" in out) && !out.$ref) {
    out.type = ANY_SCALAR
  }
  return out
}

/**
 * `schema` rewritten for OpenAI's strict mode: `type: "object"` at the root, every property
 * required (optional ones also accept `null`), `additionalProperties: false` on every object,
 * keywords strict mode refuses removed (a `default` is kept in words in the description), `oneOf`
 * as `anyOf`. The input is not changed. Open maps (`additionalProperties: {…}`) cannot be said in
 * strict mode: they become objects with no properties.
 */
export function toStrictSchema(schema) {
  return strictNode(isObject(schema) ? schema : {}, true)
}

/** Resolves a local `#/$defs/x` (or `#/definitions/x`) reference against `root`. */
function resolve(schema, root) {
  if (!isObject(schema) || typeof schema.$ref !== "string" || !schema.$ref.startsWith("#/")) return schema
  let node = root
  for (const part of schema.$ref.slice(2).split("/")) node = isObject(node) ? node[part.replaceAll("~1", "/").replaceAll("~0", "~")] : undefined
  return node ?? schema
}

/**
 * Arguments a strict-mode model produced, made fit for the original `schema`: a `null` given for a
 * property that was optional and did not accept `null` is removed, at every level. `args` is not
 * changed.
 */
export function stripNulls(schema, args, root = schema, depth = 0) {
  schema = resolve(schema, root)
  if (depth > 64 || !isObject(schema)) return args
  if (Array.isArray(args)) {
    const items = Array.isArray(schema.items) ? schema.items[0] : schema.items
    return items === undefined ? args : args.map((item) => stripNulls(items, item, root, depth + 1))
  }
  if (!isObject(args)) return args
  const branches = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].map((b) => resolve(b, root)).filter(isObject)
  const properties = { ...Object.assign({}, ...branches.map((b) => (isObject(b.properties) ? b.properties : {}))), ...(isObject(schema.properties) ? schema.properties : {}) }
  const required = new Set([...(Array.isArray(schema.required) ? schema.required : [])])
  const out = {}
  for (const [key, value] of Object.entries(args)) {
    const prop = properties[key]
    if (value === null && prop !== undefined && !required.has(key) && !acceptsNull(resolve(prop, root))) continue
    out[key] = prop === undefined ? value : stripNulls(prop, value, root, depth + 1)
  }
  return out
}
