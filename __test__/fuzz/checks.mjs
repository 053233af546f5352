// What no message of toolnexus may contain: a Rust type or path, a panic, serde's words.
const INTERNAL = /\b[A-Z][A-Za-z0-9]*::[A-Za-z]|\bstd::|\bcore::|panicked|\bSome\(|\bOk\(|\bErr\(|RawValue|serde_json|tokio::|rmcp::|RUST_BACKTRACE/

export function leaksInternals(text) {
  return INTERNAL.test(String(text))
}
