// Tool names, exactly as toolnexus's engine gives them (crates/engine/src/connect/naming.rs), for adapters
// whose framework accepts fewer characters: a name is shortened past 64 characters, or
// disambiguated when taken, to a readable head plus an FNV-1a hash of where it came from.

/** The longest name most model APIs accept for a tool. */
export const MAX_NAME = 64
const HASH_LEN = 8

/** 32-bit FNV-1a over the UTF-8 bytes of `parts`, with a 0xff byte between parts; 8 hex digits. */
export function shortHash(parts) {
  const encoder = new TextEncoder()
  let hash = 0x811c9dc5
  parts.forEach((part, i) => {
    if (i > 0) hash = Math.imul(hash ^ 0xff, 0x01000193)
    for (const byte of encoder.encode(part)) hash = Math.imul(hash ^ byte, 0x01000193)
  })
  return (hash >>> 0).toString(16).padStart(HASH_LEN, "0")
}

/** A readable head of `name` (first 55 characters) plus the hash of `parts`. */
export function withHash(name, parts) {
  return `${Array.from(name).slice(0, MAX_NAME - HASH_LEN - 1).join("")}_${shortHash(parts)}`
}

/** Every character outside `[A-Za-z0-9_-]` as `_`, one per UTF-16 code unit (toolnexus's `sanitize`). */
export const sanitize = (value) => value.replace(/[^A-Za-z0-9_-]/g, "_")

/** Every character outside `[A-Za-z0-9_]` as `_`, one per UTF-16 code unit (names for stricter frameworks). */
export const safeName = (value) => value.replace(/[^A-Za-z0-9_]/g, "_")

/** `plain`, shortened past MAX_NAME and hashed over `parts` when `taken`: the engine's `fresh_name`. */
function freshName(plain, parts, taken) {
  let name = Array.from(plain).length > MAX_NAME ? withHash(plain, parts) : plain
  if (taken.has(name)) name = withHash(plain, parts)
  return name
}

/**
 * Names for `(server, tool)` pairs in order, as `loadMcp` and toolkits name them:
 * `sanitize(server)_sanitize(tool)`, kept within 64 characters and unique (the engine's `assign`).
 */
export function assignNames(pairs) {
  const taken = new Set()
  return pairs.map(([server, tool]) => {
    const name = freshName(`${sanitize(server)}_${sanitize(tool)}`, [server, tool], taken)
    taken.add(name)
    return name
  })
}

/**
 * Names made of `[A-Za-z0-9_]` for a list of toolnexus tool names that stay put while the list
 * changes: a name already safe keeps itself (so a real `x_get_sum` is never renamed because of an
 * `x_get-sum`); another is `safeName(name)` when that is free, else disambiguated with the same
 * hash the engine uses (here over the one part, the toolnexus name). Like the engine's `Namer`,
 * a name is given for as long as its tool is listed.
 */
export class SafeNamer {
  #given = new Map()

  /** Safe names for `names` (unique toolnexus names), in order. */
  assign(names) {
    const listed = new Set(names)
    for (const key of this.#given.keys()) if (!listed.has(key)) this.#given.delete(key)
    const taken = new Set(this.#given.values())
    for (const name of names) {
      if (!this.#given.has(name) && safeName(name) === name && Array.from(name).length <= MAX_NAME && !taken.has(name)) {
        this.#given.set(name, name)
        taken.add(name)
      }
    }
    return names.map((name) => {
      let given = this.#given.get(name)
      if (given === undefined) {
        given = freshName(safeName(name), [name], taken)
        this.#given.set(name, given)
        taken.add(given)
      }
      return given
    })
  }
}
