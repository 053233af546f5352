// A form generated from a JSON Schema, for tool arguments and elicitation answers: strings
// (with email/url/date inputs for those formats), numbers and integers, enums (also oneOf/anyOf
// of consts, and enumNames) as selects, booleans as checkboxes, arrays with rows to add and
// remove (arrays of enum values as a set of checkboxes), nested objects as fieldsets, local
// $refs, required marks and defaults (pre-filled and named). What the generator cannot show
// as fields (no type, a mixed anyOf, a map) is a JSON text box for that value alone.
//
// Schemas come from servers, which are untrusted: every text is set with textContent, nothing
// is assumed about a schema's shape, and recursion is bounded. Property names are any strings
// ("__proto__", "constructor" and "toString" too): only own properties are read, and objects
// are built with defineProperty, never by assignment.
//
//   const form = schemaForm(schema, { id: "call" })
//   container.append(form.element)
//   const { value, errors } = form.value()   // errors: ["count: must be a whole number", …]
//   form.set({ count: 3 })                   // from raw JSON back into the fields

const MAX_DEPTH = 12

/** An element with attributes and children (strings become text nodes). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue
    if (key === "class") el.className = value
    else if (key === "text") el.textContent = value
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value)
    else el.setAttribute(key, value === true ? "" : String(value))
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue
    el.append(typeof child === "string" ? document.createTextNode(child) : child)
  }
  return el
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v)
/** `obj[key]` when it is `obj`'s own property (not one of Object.prototype's), else undefined. */
const own = (obj, key) => (isObject(obj) && Object.hasOwn(obj, key) ? obj[key] : undefined)
/** Sets `obj[key]` as an own property, whatever the key ("__proto__" would set the prototype). */
const define = (obj, key, value) => Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })

/** Follows a local `$ref` (`#/$defs/x`, `#/definitions/x`) and merges `allOf` object parts. */
function resolve(schema, root, depth = 0) {
  if (!isObject(schema)) return {}
  let s = schema
  if (typeof s.$ref === "string" && s.$ref.startsWith("#") && depth < MAX_DEPTH) {
    let target = root
    for (const part of s.$ref.slice(1).split("/").filter(Boolean)) {
      target = own(target, decodeURIComponent(part).replaceAll("~1", "/").replaceAll("~0", "~"))
    }
    const { $ref, ...rest } = s
    s = { ...resolve(target, root, depth + 1), ...rest }
  }
  if (Array.isArray(s.allOf) && s.allOf.every(isObject)) {
    const merged = { ...s, properties: { ...(isObject(s.properties) ? s.properties : {}) }, required: [...(Array.isArray(s.required) ? s.required : [])] }
    delete merged.allOf
    for (const part of s.allOf.map((p) => resolve(p, root, depth + 1))) {
      if (part.type !== undefined && merged.type === undefined) merged.type = part.type
      if (isObject(part.properties)) for (const [key, value] of Object.entries(part.properties)) define(merged.properties, key, value)
      if (Array.isArray(part.required)) merged.required.push(...part.required)
    }
    s = merged
  }
  return s
}

/** The schema's type: the first non-null of a type list, else what its keywords imply. */
function typeOf(s) {
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== "null") : s.type
  if (typeof t === "string") return t
  if (isObject(s.properties)) return "object"
  if (s.items !== undefined) return "array"
  if (Array.isArray(s.enum) && s.enum.length > 0) return typeof s.enum[0] === "number" ? "number" : typeof s.enum[0] === "boolean" ? "boolean" : "string"
  return undefined
}

/** The fixed choices of a schema: `enum` (labelled by `enumNames`), or a oneOf/anyOf of consts. */
function choicesOf(s) {
  if (Array.isArray(s.enum) && s.enum.length > 0) {
    const names = Array.isArray(s.enumNames) ? s.enumNames : []
    return s.enum.map((value, i) => ({ value, label: typeof names[i] === "string" ? names[i] : labelOf(value) }))
  }
  for (const key of ["oneOf", "anyOf"]) {
    const list = s[key]
    if (Array.isArray(list) && list.length > 0 && list.every((o) => isObject(o) && "const" in o)) {
      return list.map((o) => ({ value: o.const, label: typeof o.title === "string" ? o.title : labelOf(o.const) }))
    }
  }
  return null
}

const labelOf = (v) => (typeof v === "string" ? v : JSON.stringify(v))
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b)

let serial = 0

/**
 * Builds the form for `schema` (an object schema: its properties are the fields). `id` prefixes
 * element ids; the returned `value()` gives `{ value, errors }`, `set(value)` fills the fields.
 */
export function schemaForm(schema, { id = "form" } = {}) {
  const root = isObject(schema) ? schema : {}
  const prefix = `${id}-${++serial}`
  const top = resolve(root, root)
  // A tool's inputSchema is an object; anything else is shown as one value under "value".
  const field = typeOf(top) === "object" || Object.keys(top).length === 0 ? objectField(top, [], { root, prefix, depth: 0, top: true }) : valueField(top, ["value"], true, { root, prefix, depth: 0 })
  const element = h("div", { class: "schema-form" }, field.el)
  return {
    element,
    value() {
      const errors = []
      const value = field.get(errors)
      return { value: value === undefined && field.kind === "object" ? {} : value, errors }
    },
    set(value) {
      field.set(value)
    },
  }
}

/** The label of a field: its title or key, a required mark, its description and default. */
function labelParts(s, key, required, inputId) {
  const title = typeof s.title === "string" && s.title !== "" ? s.title : key
  // A group (an object, an array, a set of choices) is named by a plain caption, not a <label>.
  // The required mark stands beside the label, so the label names the field alone.
  const mark = required ? h("span", { class: "required", title: "required" }, " *") : null
  const caption = inputId === null ? h("span", { class: "field-label" }, title) : h("label", { for: inputId, class: "field-label" }, title)
  const label = h("span", { class: "label-line" }, caption, mark)
  const hints = []
  if (typeof s.title === "string" && s.title !== "" && s.title !== key && !/^\d+$/.test(key)) hints.push(h("code", { class: "key" }, key))
  if (typeof s.description === "string" && s.description !== "") hints.push(h("span", { class: "description" }, s.description))
  if (s.default !== undefined) hints.push(h("span", { class: "default" }, `default: ${labelOf(s.default)}`))
  const bounds = []
  if (typeof s.minimum === "number") bounds.push(`≥ ${s.minimum}`)
  if (typeof s.maximum === "number") bounds.push(`≤ ${s.maximum}`)
  if (typeof s.minItems === "number") bounds.push(`at least ${s.minItems}`)
  if (typeof s.maxItems === "number") bounds.push(`at most ${s.maxItems}`)
  if (typeof s.minLength === "number" && s.minLength > 0) bounds.push(`${s.minLength}+ characters`)
  if (typeof s.maxLength === "number") bounds.push(`up to ${s.maxLength} characters`)
  if (bounds.length > 0) hints.push(h("span", { class: "bounds" }, bounds.join(", ")))
  return { label, hint: hints.length > 0 ? h("div", { class: "hint" }, hints) : null, title }
}

const idFor = (ctx, path) => `${ctx.prefix}-${path.map((p) => String(p).replace(/[^\w-]/g, "_")).join("-") || "root"}`

/** An object: a fieldset of its properties. Optional and left empty, it is left out. */
function objectField(s, path, ctx, required = false) {
  const props = isObject(s.properties) ? s.properties : {}
  const req = new Set(Array.isArray(s.required) ? s.required.filter((r) => typeof r === "string") : [])
  const children = []
  for (const [key, raw] of Object.entries(props)) {
    const child = resolve(raw, ctx.root)
    children.push([key, valueField(child, [...path, key], req.has(key), { ...ctx, top: false, depth: ctx.depth + 1 })])
  }
  // A map (additionalProperties only) is edited as JSON.
  const mapField = Object.keys(props).length === 0 && !ctx.top && s.additionalProperties !== false ? jsonField(s, path, required, ctx) : null
  const el = ctx.top
    ? h("div", { class: "fields" }, children.length === 0 ? h("p", { class: "dim" }, "This takes no arguments.") : null, children.map(([, c]) => c.el))
    : mapField?.el ?? objectBox(s, path, required, children)
  return {
    kind: "object",
    el,
    get(errors) {
      if (mapField) return mapField.get(errors)
      const out = {}
      for (const [key, child] of children) {
        const v = child.get(errors)
        // defineProperty: a property named "__proto__" is a property like any other here.
        if (v !== undefined) define(out, key, v)
      }
      if (Object.keys(out).length === 0 && !required && !ctx.top) return undefined
      return out
    },
    set(value) {
      if (mapField) return mapField.set(value)
      // Only the value's own properties: `{}` leaves "constructor" or "__proto__" fields empty.
      for (const [key, child] of children) child.set(own(value, key))
    },
  }
}

/** A nested object's fieldset: its caption and hints, then its fields. */
function objectBox(s, path, required, children) {
  const { label, hint } = labelParts(s, String(path.at(-1) ?? ""), required, null)
  return h("fieldset", { class: "object" }, h("legend", {}, label), hint, children.map(([, c]) => c.el))
}

/** One value of any schema: dispatches on choices and type. */
function valueField(s, path, required, ctx) {
  if (ctx.depth > MAX_DEPTH) return jsonField(s, path, required, ctx)
  const choices = choicesOf(s)
  const type = typeOf(s)
  if (type === "array") {
    const items = resolve(s.items, ctx.root)
    const itemChoices = choicesOf(items)
    if (itemChoices) return multiChoiceField(s, itemChoices, path, required, ctx)
    return arrayField(s, items, path, required, ctx)
  }
  if (choices) return choiceField(s, choices, path, required, ctx)
  if (type === "object") return objectField(s, path, ctx, required)
  if (type === "boolean") return booleanField(s, path, required, ctx)
  if (type === "number" || type === "integer") return numberField(s, type, path, required, ctx)
  if (type === "string") return stringField(s, path, required, ctx)
  return jsonField(s, path, required, ctx)
}

/** A labelled row around `input`. */
function row(s, path, required, ctx, input, extraClass = "") {
  const id = input.id || idFor(ctx, path)
  input.id = id
  const { label, hint } = labelParts(s, String(path.at(-1) ?? "value"), required, id)
  return h("div", { class: `field ${extraClass}`.trim() }, label, input, hint)
}

const missing = (errors, s, path) => errors.push(`${titleOf(s, path)}: is required`)
const titleOf = (s, path) => (typeof s.title === "string" && s.title !== "" ? s.title : path.join(".") || "value")

function mark(input, bad) {
  if (bad) input.setAttribute("aria-invalid", "true")
  else input.removeAttribute("aria-invalid")
}

function stringField(s, path, required, ctx) {
  const formats = { email: "email", uri: "url", url: "url", date: "date", time: "time" }
  const long = typeof s.maxLength === "number" ? s.maxLength > 200 : false
  const input = long
    ? h("textarea", { id: idFor(ctx, path), name: path.join("."), rows: 3 })
    : h("input", { id: idFor(ctx, path), name: path.join("."), type: own(formats, s.format) ?? "text", autocomplete: "off" })
  if (required) input.setAttribute("aria-required", "true")
  if (typeof s.const === "string") input.readOnly = true
  const set = (v) => {
    input.value = typeof v === "string" ? v : v === undefined || v === null ? "" : String(v)
  }
  set(s.const ?? s.default)
  return {
    el: row(s, path, required, ctx, input),
    get(errors) {
      const v = input.value
      mark(input, false)
      if (v === "") {
        if (required) {
          mark(input, true)
          missing(errors, s, path)
        }
        return undefined
      }
      if (typeof s.pattern === "string") {
        try {
          if (!new RegExp(s.pattern, "u").test(v)) {
            mark(input, true)
            errors.push(`${titleOf(s, path)}: does not match ${s.pattern}`)
          }
        } catch {}
      }
      return v
    },
    set,
  }
}

function numberField(s, type, path, required, ctx) {
  const input = h("input", { id: idFor(ctx, path), name: path.join("."), type: "number", step: type === "integer" ? "1" : "any", inputmode: type === "integer" ? "numeric" : "decimal" })
  if (typeof s.minimum === "number") input.min = String(s.minimum)
  if (typeof s.maximum === "number") input.max = String(s.maximum)
  if (required) input.setAttribute("aria-required", "true")
  const set = (v) => {
    input.value = typeof v === "number" && Number.isFinite(v) ? String(v) : typeof v === "string" ? v : ""
  }
  set(s.default)
  return {
    el: row(s, path, required, ctx, input),
    get(errors) {
      mark(input, false)
      const raw = input.value.trim()
      if (raw === "") {
        // A number input holding text that is not a number reads as "" but is not empty.
        if (input.validity?.badInput) {
          mark(input, true)
          errors.push(`${titleOf(s, path)}: is not a number`)
        } else if (required) {
          mark(input, true)
          missing(errors, s, path)
        }
        return undefined
      }
      const n = Number(raw)
      if (!Number.isFinite(n)) {
        mark(input, true)
        errors.push(`${titleOf(s, path)}: is not a number`)
        return undefined
      }
      if (type === "integer" && !Number.isInteger(n)) {
        mark(input, true)
        errors.push(`${titleOf(s, path)}: must be a whole number`)
      }
      if (typeof s.minimum === "number" && n < s.minimum) errors.push(`${titleOf(s, path)}: must be at least ${s.minimum}`)
      if (typeof s.maximum === "number" && n > s.maximum) errors.push(`${titleOf(s, path)}: must be at most ${s.maximum}`)
      return n
    },
    set,
  }
}

function booleanField(s, path, required, ctx) {
  // An optional boolean without a default can be left unset: a three-way select.
  if (!required && typeof s.default !== "boolean") {
    const select = h("select", { id: idFor(ctx, path), name: path.join(".") }, h("option", { value: "" }, "— not set —"), h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"))
    return {
      el: row(s, path, required, ctx, select),
      get: () => (select.value === "" ? undefined : select.value === "true"),
      set: (v) => {
        select.value = v === true ? "true" : v === false ? "false" : ""
      },
    }
  }
  const input = h("input", { id: idFor(ctx, path), name: path.join("."), type: "checkbox" })
  const set = (v) => {
    input.checked = v === true
  }
  set(s.default)
  return { el: row(s, path, required, ctx, input, "checkbox"), get: () => input.checked, set }
}

function choiceField(s, choices, path, required, ctx) {
  const select = h("select", { id: idFor(ctx, path), name: path.join(".") })
  // Without a default, the first option is "nothing chosen" (a required field then says so).
  if (s.default === undefined || !required) select.append(h("option", { value: "" }, required ? "— choose —" : "— not set —"))
  choices.forEach((c, i) => select.append(h("option", { value: String(i) }, c.label)))
  if (required) select.setAttribute("aria-required", "true")
  const set = (v) => {
    const i = choices.findIndex((c) => same(c.value, v))
    select.value = i >= 0 ? String(i) : select.options[0]?.value ?? ""
  }
  set(s.default)
  return {
    el: row(s, path, required, ctx, select),
    get(errors) {
      mark(select, false)
      if (select.value === "") {
        if (required) {
          mark(select, true)
          missing(errors, s, path)
        }
        return undefined
      }
      return choices[Number(select.value)]?.value
    },
    set,
  }
}

/** An array of enum values: one checkbox per value. */
function multiChoiceField(s, choices, path, required, ctx) {
  const id = idFor(ctx, path)
  const boxes = choices.map((c, i) => {
    const box = h("input", { type: "checkbox", id: `${id}-${i}`, name: path.join("."), value: String(i) })
    return { box, el: h("label", { class: "choice", for: `${id}-${i}` }, box, ` ${c.label}`) }
  })
  const group = h("div", { class: "choices", role: "group", id, "aria-label": titleOf(s, path) }, boxes.map((b) => b.el))
  const set = (v) => {
    const list = Array.isArray(v) ? v : []
    boxes.forEach((b, i) => {
      b.box.checked = list.some((x) => same(x, choices[i].value))
    })
  }
  set(s.default)
  const { label, hint } = labelParts(s, String(path.at(-1) ?? "value"), required, null)
  return {
    el: h("div", { class: "field" }, label, group, hint),
    get(errors) {
      const out = choices.filter((_, i) => boxes[i].box.checked).map((c) => c.value)
      if (out.length === 0 && !required) return undefined
      if (typeof s.minItems === "number" && out.length < s.minItems) errors.push(`${titleOf(s, path)}: choose at least ${s.minItems}`)
      if (typeof s.maxItems === "number" && out.length > s.maxItems) errors.push(`${titleOf(s, path)}: choose at most ${s.maxItems}`)
      return out
    },
    set,
  }
}

/** An array: a row per item, each with a remove button, and an add button. */
function arrayField(s, items, path, required, ctx) {
  const id = idFor(ctx, path)
  const list = h("div", { class: "rows" })
  const rows = []
  const add = (value) => {
    const index = serial++
    // Each row is captioned "item" (or the items' own title); an empty row is left out.
    const itemSchema = { ...items, title: typeof items.title === "string" && items.title !== "" ? items.title : "item" }
    const field = valueField(itemSchema, [...path, index], false, { ...ctx, top: false, depth: ctx.depth + 1 })
    if (value !== undefined) field.set(value)
    const entry = { field }
    entry.el = h(
      "div",
      { class: "array-row" },
      field.el,
      h("button", {
        type: "button",
        class: "small remove",
        title: "remove this item",
        onclick: () => {
          rows.splice(rows.indexOf(entry), 1)
          entry.el.remove()
        },
      }, "Remove"),
    )
    rows.push(entry)
    list.append(entry.el)
  }
  const set = (v) => {
    for (const r of rows.splice(0)) r.el.remove()
    if (Array.isArray(v)) for (const item of v) add(item)
  }
  set(s.default)
  const { label, hint } = labelParts(s, String(path.at(-1) ?? "value"), required, null)
  const addButton = h("button", { type: "button", id: `${id}-add`, class: "small add", onclick: () => add(undefined) }, "Add item")
  return {
    el: h("fieldset", { class: "array" }, h("legend", {}, label), hint, list, addButton),
    get(errors) {
      const out = []
      for (const r of rows) {
        const v = r.field.get(errors)
        if (v !== undefined) out.push(v)
      }
      if (out.length === 0 && !required && rows.length === 0) return undefined
      if (typeof s.minItems === "number" && out.length < s.minItems) errors.push(`${titleOf(s, path)}: needs at least ${s.minItems} items`)
      if (typeof s.maxItems === "number" && out.length > s.maxItems) errors.push(`${titleOf(s, path)}: takes at most ${s.maxItems} items`)
      return out
    },
    set,
  }
}

/** A value the generator has no fields for: JSON text. */
function jsonField(s, path, required, ctx) {
  const input = h("textarea", { id: idFor(ctx, path), name: path.join("."), rows: 3, class: "mono", placeholder: "JSON" })
  const set = (v) => {
    input.value = v === undefined ? "" : JSON.stringify(v, null, 2)
  }
  set(s.default)
  return {
    el: row(s, path, required, ctx, input, "json"),
    get(errors) {
      mark(input, false)
      if (input.value.trim() === "") {
        if (required) {
          mark(input, true)
          missing(errors, s, path)
        }
        return undefined
      }
      try {
        return JSON.parse(input.value)
      } catch (err) {
        mark(input, true)
        errors.push(`${titleOf(s, path)}: is not valid JSON (${err.message})`)
        return undefined
      }
    },
    set,
  }
}
