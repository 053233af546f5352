// JSON Schema → TypeScript, for `toolnexus types`: the type of a tool's arguments (its
// inputSchema) and of its structured result (its outputSchema), as TypeScript source text.
//
// What it understands: `type` (one or a list), `enum` and `const` (literal unions), objects
// (`properties`, `required`, `additionalProperties`, `patternProperties`), arrays (`items`,
// `prefixItems`, draft-07 tuple `items` with `additionalItems`, `minItems` for optional tuple
// elements), `anyOf`/`oneOf` (unions), `allOf` (intersections), `nullable`, and local `$ref`s
// (`#`, `#/$defs/…`, `#/definitions/…`, any JSON pointer into the same schema), which become
// named types so that a recursive schema stays finite. `description`, `title`, `default`,
// `format` and `deprecated` go into JSDoc. Anything else is `unknown`, never an error.
//
// Schemas come from servers, so nothing here trusts them: nesting, the number of nodes, of
// properties, of enum values and of named definitions are bounded (past a bound a type is
// `unknown`), JSDoc text is escaped and clipped, and a property name that is not an identifier
// is quoted.

/** Bounds against hostile schemas; past each, the part not converted is `unknown`. */
export const LIMITS = {
  /** Nesting of schemas within schemas. */
  depth: 24,
  /** Schemas converted per tool schema (its definitions included). */
  nodes: 4000,
  /** Properties of one object, elements of one tuple. */
  properties: 500,
  /** Values of one enum (more: the enum's `type`, or `unknown`). */
  enumValues: 300,
  /** Named definitions ($ref targets) per tool schema. */
  definitions: 100,
  /** Characters of one JSDoc text (description, default value). */
  doc: 1000,
}

// A converted type: its text and how tightly it binds, so that it is parenthesised only where
// needed (a union inside an array, an intersection or a union member of an intersection).
const UNION = 0
const INTERSECTION = 1
const ATOM = 2
const atom = (t) => ({ t, prec: ATOM })
const UNKNOWN = atom("unknown")
const NEVER = atom("never")

const paren = (x, prec) => (x.prec < prec ? `(${x.t})` : x.t)

/** `A | B`, flattened and without repeats; `unknown` absorbs the rest, `never` drops out. */
function unionOf(types) {
  const members = []
  for (const x of types) {
    if (x.t === "unknown") return UNKNOWN
    if (x.t === "never" || members.some((m) => m.t === x.t)) continue
    members.push(x)
  }
  if (members.length === 0) return NEVER
  if (members.length === 1) return members[0]
  return { t: members.map((m) => m.t).join(" | "), prec: UNION }
}

/** `A & B`; `unknown` drops out, `never` absorbs the rest. */
function intersectionOf(types) {
  const members = []
  for (const x of types) {
    if (x.t === "never") return NEVER
    if (x.t === "unknown" || members.some((m) => m.t === x.t)) continue
    members.push(x)
  }
  if (members.length === 0) return UNKNOWN
  if (members.length === 1) return members[0]
  return { t: members.map((m) => paren(m, INTERSECTION)).join(" & "), prec: INTERSECTION }
}

const arrayOf = (x) => atom(`${paren(x, ATOM)}[]`)

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v)

/** A string literal (JSON's escapes, and U+2028/9 escaped too, for older parsers). */
export const stringLiteral = (text) => JSON.stringify(text).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)

/** An identifier stays bare as a property name; anything else is a quoted string. */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/
export const propertyKey = (name) => (IDENTIFIER.test(name) ? name : stringLiteral(name))

/** `text` clipped to `max` characters, with an ellipsis when cut. */
const clip = (text, max) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** The lines of `text`, split at every JavaScript line terminator (U+2028/9 included). */
export const lines = (text) => text.split(/\r\n|[\r\n\u2028\u2029]/)

/**
 * A JSDoc comment of `texts` (paragraphs, `@tags`), each line at `indent`, ending in a newline;
 * "" when there is nothing to say. `*\/` in the text cannot close the comment.
 */
export function jsdoc(texts, indent = "") {
  const body = texts
    .filter((t) => typeof t === "string" && t.trim() !== "")
    // A blank line between paragraphs, and before the first tag; tags follow one another.
    .flatMap((t, i, all) => [...(i > 0 && !(t.trim().startsWith("@") && all[i - 1].trim().startsWith("@")) ? [""] : []), ...lines(clip(t.trim(), LIMITS.doc))])
    .map((line) => line.replaceAll("*/", "*\\/").trimEnd())
  if (body.length === 0) return ""
  if (body.length === 1) return `${indent}/** ${body[0]} */\n`
  return `${indent}/**\n${body.map((line) => (line ? `${indent} * ${line}` : `${indent} *`)).join("\n")}\n${indent} */\n`
}

/** What a schema's JSDoc says: its description (or title), default, format, deprecation. */
export function schemaDocs(schema) {
  if (!isObject(schema)) return []
  const docs = []
  const about = typeof schema.description === "string" ? schema.description : typeof schema.title === "string" ? schema.title : undefined
  if (about !== undefined) docs.push(about)
  if (schema.default !== undefined) {
    let shown
    try {
      shown = JSON.stringify(schema.default)
    } catch {
      shown = undefined
    }
    if (shown !== undefined) docs.push(`@default ${clip(shown, 200)}`)
  }
  if (typeof schema.format === "string") docs.push(`@format ${clip(schema.format, 100)}`)
  if (schema.deprecated === true) docs.push("@deprecated")
  return docs
}

/** "fix_tree args" + "Node" → "FixTreeArgsNode": a readable type name from words. */
function pascal(...words) {
  const name = words
    .join(" ")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join("")
    .slice(0, 80)
  return /^[A-Za-z]/.test(name) ? name : `T${name}`
}

/**
 * Collects the named types (definitions reached by `$ref`) of every schema converted with it,
 * under names unique in one file.
 */
export class TypeWriter {
  /** @param {string[]} reserved  names the file declares itself */
  constructor(reserved = []) {
    this.declarations = []
    this.names = new Set(reserved)
  }

  /** A name not used yet, made of `words`. */
  uniqueName(...words) {
    const base = pascal(...words)
    let name = base
    for (let n = 2; this.names.has(name); n++) name = `${base}${n}`
    this.names.add(name)
    return name
  }

  /**
   * The TypeScript type of `schema`, laid out for a member at `indent`. `owner` ("fix_tree
   * args") prefixes the names of its definitions.
   */
  type(schema, { owner, indent = "" }) {
    const state = { root: schema, owner, writer: this, nodes: 0, refs: new Map(), open: new Map(), guard: 0 }
    return convert(schema, state, 0, indent).t
  }
}

/** The schema `pointer` ("#", "#/$defs/Node") points at within `root`; undefined if none. */
function resolvePointer(root, pointer) {
  if (pointer === "#") return root
  if (!pointer.startsWith("#/")) return undefined
  let at = root
  for (const raw of pointer.slice(2).split("/")) {
    let key
    try {
      key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~")
    } catch {
      return undefined
    }
    if (at === null || typeof at !== "object" || !Object.hasOwn(at, key)) return undefined
    at = at[key]
  }
  return at
}

/**
 * A `$ref`: a named type declared once per target. A reference back to a definition being
 * converted is kept only when it sits inside an object or array of it (`type A = { next?: A }`);
 * directly (`type A = A | string`) TypeScript would reject the alias as circular, so it is
 * `unknown` there.
 */
function reference(pointer, state, depth) {
  if (state.open.has(pointer)) return state.guard > state.open.get(pointer) ? atom(state.refs.get(pointer)) : UNKNOWN
  if (state.refs.has(pointer)) return atom(state.refs.get(pointer))
  const target = resolvePointer(state.root, pointer)
  if (target === undefined || state.refs.size >= LIMITS.definitions) return UNKNOWN
  const last = pointer === "#" ? "self" : pointer.slice(pointer.lastIndexOf("/") + 1)
  const name = state.writer.uniqueName(state.owner, last)
  state.refs.set(pointer, name)
  state.open.set(pointer, state.guard)
  const body = convert(target, state, depth + 1, "")
  state.open.delete(pointer)
  state.writer.declarations.push(`${jsdoc(schemaDocs(target))}export type ${name} = ${body.t}\n`)
  return atom(name)
}

/** A JSON value as a literal type ("a" | 1 | true | null, tuples and object literals of them). */
function literal(value, depth = 0) {
  if (typeof value === "string") return atom(stringLiteral(value))
  if (value === null || typeof value === "boolean") return atom(JSON.stringify(value))
  if (typeof value === "number") return Number.isFinite(value) ? atom(JSON.stringify(value)) : atom("number")
  if (depth > 8) return UNKNOWN
  if (Array.isArray(value)) return atom(`[${value.slice(0, LIMITS.properties).map((v) => literal(v, depth + 1).t).join(", ")}]`)
  if (isObject(value)) {
    const members = Object.entries(value)
      .slice(0, LIMITS.properties)
      .map(([k, v]) => `${propertyKey(k)}: ${literal(v, depth + 1).t}`)
    return atom(members.length === 0 ? "Record<string, never>" : `{ ${members.join("; ")} }`)
  }
  return UNKNOWN
}

/** Converts one schema; `indent` is where the member holding it starts (for object layout). */
function convert(schema, state, depth, indent) {
  if (schema === true || schema === undefined) return UNKNOWN
  if (schema === false) return NEVER
  if (!isObject(schema)) return UNKNOWN
  if (depth > LIMITS.depth || ++state.nodes > LIMITS.nodes) return UNKNOWN
  const parts = []
  if (typeof schema.$ref === "string") parts.push(reference(schema.$ref, state, depth))
  if (Object.hasOwn(schema, "const")) parts.push(literal(schema.const))
  else if (Array.isArray(schema.enum) && schema.enum.length <= LIMITS.enumValues) parts.push(unionOf(schema.enum.map((v) => literal(v))))
  else parts.push(byType(schema, state, depth, indent))
  if (Array.isArray(schema.allOf)) parts.push(...schema.allOf.map((s) => convert(s, state, depth + 1, indent)))
  for (const key of ["anyOf", "oneOf"]) {
    if (Array.isArray(schema[key])) parts.push(unionOf(schema[key].map((s) => convert(s, state, depth + 1, indent))))
  }
  const type = intersectionOf(parts)
  return schema.nullable === true ? unionOf([type, atom("null")]) : type
}

/** The schema's `type` (or the type its keywords imply): `unknown` when it says none. */
function byType(schema, state, depth, indent) {
  let types = schema.type
  if (typeof types === "string") types = [types]
  else if (!Array.isArray(types)) {
    const objectish = ["properties", "additionalProperties", "patternProperties", "required"].some((k) => k in schema)
    const arrayish = ["items", "prefixItems"].some((k) => k in schema)
    if (objectish) types = ["object"]
    else if (arrayish) types = ["array"]
    else return UNKNOWN
  }
  return unionOf(
    types.map((type) => {
      switch (type) {
        case "string":
          return atom("string")
        case "number":
        case "integer":
          return atom("number")
        case "boolean":
          return atom("boolean")
        case "null":
          return atom("null")
        case "array":
          return arrayType(schema, state, depth, indent)
        case "object":
          return objectType(schema, state, depth, indent)
        default:
          return UNKNOWN
      }
    }),
  )
}

/** Runs `fn` with the guard raised: a reference met inside is one the alias may hold. */
function guarded(state, fn) {
  state.guard++
  try {
    return fn()
  } finally {
    state.guard--
  }
}

function arrayType(schema, state, depth, indent) {
  const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : null
  return guarded(state, () => {
    if (tuple === null) return arrayOf(convert(schema.items, state, depth + 1, indent))
    // 2020-12: prefixItems, then `items` for the rest; draft-07: `items` list, then `additionalItems`.
    const rest = Array.isArray(schema.prefixItems) ? schema.items : schema.additionalItems
    const min = Number.isInteger(schema.minItems) && schema.minItems > 0 ? schema.minItems : 0
    const elements = tuple.slice(0, LIMITS.properties).map((s, i) => {
      const x = convert(s, state, depth + 1, indent)
      return i < min ? x.t : `${paren(x, ATOM)}?`
    })
    if (rest !== false) elements.push(`...${arrayOf(convert(rest, state, depth + 1, indent)).t}`)
    return atom(`[${elements.join(", ")}]`)
  })
}

function objectType(schema, state, depth, indent) {
  const inner = `${indent}  `
  const properties = isObject(schema.properties) ? Object.entries(schema.properties).slice(0, LIMITS.properties) : []
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((k) => typeof k === "string") : [])
  return guarded(state, () => {
    const members = []
    const memberTypes = []
    let optional = false
    for (const [key, sub] of properties) {
      const x = convert(sub, state, depth + 1, inner)
      memberTypes.push(x)
      if (!required.has(key)) optional = true
      members.push(`${jsdoc(schemaDocs(sub), inner)}${inner}${propertyKey(key)}${required.has(key) ? "" : "?"}: ${x.t}`)
    }
    // A required name with no schema of its own: required all the same, of any type.
    for (const key of required) {
      if (!properties.some(([k]) => k === key) && members.length < LIMITS.properties) {
        members.push(`${inner}${propertyKey(key)}: unknown`)
        memberTypes.push(UNKNOWN)
      }
    }
    // Other keys: absent or `true` allows any (as JSON Schema does), `false` none, a schema its
    // type; `patternProperties` add theirs.
    const ap = schema.additionalProperties
    const others = []
    if (ap === undefined || ap === true) others.push(UNKNOWN)
    else if (ap !== false) others.push(convert(ap, state, depth + 1, inner))
    if (isObject(schema.patternProperties)) {
      for (const sub of Object.values(schema.patternProperties).slice(0, LIMITS.properties)) others.push(convert(sub, state, depth + 1, inner))
    }
    let index
    if (others.length > 0) {
      // TypeScript wants every property's type within the index signature's.
      index = unionOf(others)
      if (index.t !== "unknown" && members.length > 0) index = unionOf([index, ...memberTypes, ...(optional ? [atom("undefined")] : [])])
    }
    // An index signature, not Record<…>: a type alias may refer to itself through an object
    // type's members but not through a generic's arguments (`type J = J[] | Record<string, J>`
    // is TS2456, a circular reference).
    if (members.length === 0) return atom(!index ? "Record<string, never>" : index.t === "unknown" ? "Record<string, unknown>" : `{ [key: string]: ${index.t} }`)
    if (index) members.push(`${inner}[key: string]: ${index.t}`)
    return atom(`{\n${members.join("\n")}\n${indent}}`)
  })
}
