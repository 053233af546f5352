// What the serve-oauth-*.test.mjs files share: the authorisation server (lib/idp.mjs's startIdp,
// closed after the test), the secrets a test must not find in output, and the checks of an
// initialize served and of a 401 invalid_token.
import assert from "node:assert/strict"
import { deferredCleanup } from "../helpers.mjs"
import { challenge } from "./gateway.mjs"
import { startIdp } from "./idp.mjs"

export const now = () => Math.floor(Date.now() / 1000)
export const prmUrl = (url) => `${url}/.well-known/oauth-protected-resource/mcp`

/**
 * The clean-up an OAuth test file registers with `afterEach` (`defer(fn)` adds to it), and
 * `idp(opts)`: an authorisation server closed after the test.
 */
export function oauthHarness(afterEach) {
  const defer = deferredCleanup(afterEach)
  async function idp(opts) {
    const server = await startIdp(opts)
    defer(() => server.close())
    return server
  }
  return { defer, idp }
}

/** Every secret a test must not find in output: the IdP's tokens and client secrets. */
export const secretsOf = (server, extra = []) => [...server.minted, ...server.secrets, ...extra]

/** An initialize answered 200 (a session opened, or a stateless answer). */
export function assertServed(res, what) {
  assert.equal(res.status, 200, `${what}: ${res.status} ${res.text}`)
  assert.equal(res.json?.result?.serverInfo?.name, "toolnexus", what)
}

/** A 401 invalid_token with the whole challenge and a body that says the same. */
export function assertInvalidToken(res, prm, what, { scope } = {}) {
  assert.equal(res.status, 401, `${what}: ${res.status} ${res.text}`)
  const c = challenge(res.headers.get("www-authenticate"))
  assert.equal(c?.scheme, "Bearer", what)
  const { error_description: description, ...rest } = c.params
  assert.deepEqual(rest, { realm: "toolnexus", resource_metadata: prm, error: "invalid_token", ...(scope ? { scope } : {}) }, what)
  assert.match(description ?? "", /\S/, `${what}: an error_description`)
  assert.deepEqual(res.json, { error: "invalid_token", error_description: description }, what)
}
