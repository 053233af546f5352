// A small seeded generator (mulberry32) and the random values the fuzzers draw from it, so a
// case is replayed exactly from its seed.

/** A generator of floats in [0, 1) from a 32-bit seed. */
export function rng(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n) => Math.floor(next() * n)
  const pick = (items) => items[int(items.length)]
  const chance = (p) => next() < p
  /** One of `weights`' keys, each as likely as its weight. */
  const weighted = (weights) => {
    const total = Object.values(weights).reduce((a, b) => a + b, 0)
    let at = next() * total
    for (const [key, weight] of Object.entries(weights)) {
      at -= weight
      if (at < 0) return key
    }
    return Object.keys(weights)[0]
  }
  const STRINGS = ["", "a", "x".repeat(300), "naïve ☃ 🧰", "\u0000\u0001", "a\nb", "${HOME}", "../../etc/passwd", "<script>", "__proto__", "constructor", "🙂".repeat(40)]
  const string = () => (chance(0.5) ? pick(STRINGS) : `s${int(1e6)}`)
  /** Any JSON value, at most `depth` deep. */
  const value = (depth = 3) => {
    const kind = depth <= 0 ? int(5) : int(7)
    switch (kind) {
      case 0: return null
      case 1: return chance(0.5)
      case 2: return pick([0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, Number.MIN_VALUE, int(1000)])
      case 3: return string()
      case 4: return pick([[], {}])
      case 5: return Array.from({ length: int(4) }, () => value(depth - 1))
      default: return Object.fromEntries(Array.from({ length: int(4) }, () => [string(), value(depth - 1)]))
    }
  }
  return { next, int, pick, chance, weighted, string, value }
}

/** The seed of case `index` of kind `kind` in a run seeded `seed`. */
export function caseSeed(seed, kind, index) {
  let h = 2166136261 ^ seed
  for (const c of `${kind}:${index}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619)
  return h >>> 0
}
