// A real OAuth 2.1 / OpenID authorisation server for the serving-auth tests: oidc-provider (npm,
// the certified OpenID provider library) on http://127.0.0.1:<free port>, loopback only.
//
// - Keys: an ES256 and an RS256 key of its own, generated here (jose) and handed to the provider
//   as its `jwks`; the provider publishes their public halves at its own /jwks.
// - `sign(claims, opts)` signs with those same private keys, for the tokens a real server will
//   not mint (expired, not yet valid, another audience or issuer, no `sub`…); `foreignSign` with
//   a key that is not in the JWKS; `sign(claims, { alg: "none" })` gives an unsigned token.
// - `rotate()`: oidc-provider's keystore is fixed when a Provider is constructed, so a rotation
//   builds a new Provider (same issuer, clients, cookie keys; the default memory adapter's store
//   is shared by every instance, so grants, sessions and registered clients survive) whose
//   `jwks` has the new key first and the old ones after, and swaps it in behind the same
//   listener, on the same port. Its own /jwks then lists every key; new tokens are signed with
//   the new key; tokens signed by an old key still verify until `retire(kid)` drops that key.
// - Clients: `service` (confidential, client_credentials, JWT access tokens), `service-opaque`
//   (the same, opaque access tokens), `gateway` (confidential, for RFC 7662 introspection),
//   `toolnexus-cli` (public, native, PKCE; redirect http://127.0.0.1/callback on any port, as
//   RFC 8252 §7.3 allows a native client), `service-jwt` (client_credentials authenticated by
//   private_key_jwt: `serviceKeyPem` is its PKCS#8 ES256 key, the IdP holds the public half).
//   `workload` (public, the jwt-bearer grant of workload identity, RFC 7523 §2.1: an assertion
//   signed by `workloadSign(claims)`'s key, issuer `workloadIssuer`, audience this issuer).
//   Dynamic registration is open too.
// - DPoP (RFC 9449) is on, as oidc-provider has it by default: a token request with a proof gets
//   a token bound to the proof's key (`cnf.jkt`). `dpopNonce: true` makes the token endpoint
//   demand a nonce (400 use_dpop_nonce with a DPoP-Nonce header) of every proof. A public
//   client's refresh token is bound to the key too.
// - `browse(url)` does what a browser does with an authorisation URL: follows redirects, keeps
//   cookies, fills the login form (any user) and the consent form, and finally follows the
//   redirect to the client's loopback redirect URI.
import http from "node:http"
import { randomBytes, randomUUID } from "node:crypto"
import Provider, { errors as oidcErrors } from "oidc-provider"
import { SignJWT, exportJWK, exportPKCS8, generateKeyPair, jwtVerify } from "jose"

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

/** Every JWS algorithm a key here is made for. */
const KEY_ALGS = ["ES256", "RS256"]

async function makeKey(alg, prefix = alg.toLowerCase()) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const kid = `${prefix}-${randomUUID().slice(0, 8)}`
  const jwk = { ...(await exportJWK(privateKey)), kid, alg, use: "sig" }
  const pub = { ...(await exportJWK(publicKey)), kid, alg, use: "sig" }
  return { alg, kid, privateKey, publicKey, jwk, pub }
}

const b64url = (obj) => Buffer.from(JSON.stringify(obj)).toString("base64url")

/**
 * Starts the authorisation server.
 * - `audience`: the resource indicator(s) (a string or an array) tokens may be minted for; absent,
 *   any http(s)://127.0.0.1 URL is taken (the gateway's own URL is only known once it listens).
 *   More can be allowed later with `idp.audiences.add(url)`.
 * - `scopes`: the resource server's scopes (what the access tokens may carry).
 * - `alg`: the access tokens' JWS algorithm, "ES256" (default) or "RS256".
 * - `ttl`: access-token lifetime in seconds (default 600).
 */
export async function startIdp({ audience, scopes = ["tools:read"], alg = "ES256", ttl = 600, dpopNonce = false, refreshTokens = false } = {}) {
  if (!KEY_ALGS.includes(alg)) throw new TypeError(`alg must be one of ${KEY_ALGS.join(", ")}`)
  const audiences = new Set(audience === undefined ? [] : [audience].flat())
  const anyLoopback = audience === undefined
  // Newest first: the provider signs with the first key of the access tokens' algorithm.
  const keys = [await makeKey("ES256"), await makeKey("RS256")]
  const foreign = await makeKey(alg, "foreign")
  // The private_key_jwt client's own key.
  const serviceKey = await generateKeyPair("ES256", { extractable: true })
  const serviceKeyPem = await exportPKCS8(serviceKey.privateKey)
  const serviceJwk = { ...(await exportJWK(serviceKey.publicKey)), alg: "ES256", use: "sig" }
  const nonceSecret = randomBytes(32)
  // The workload identity provider (a Kubernetes cluster, a CI system) whose tokens the
  // jwt-bearer grant takes.
  const workloadKey = await generateKeyPair("ES256", { extractable: true })
  const workloadIssuer = "https://cluster.example/workloads"
  const cookieKeys = [randomUUID(), randomUUID()]
  const clientSecrets = { service: `svc-${randomUUID()}`, "service-opaque": `svco-${randomUUID()}`, gateway: `gw-${randomUUID()}` }
  /** Every token minted or issued here (to grep logs and errors for). */
  const minted = []
  // grants: each token request's grant_type and client authentication method, in order;
  // proofs: token requests that carried a DPoP proof; nonceChallenges: those answered
  // 400 use_dpop_nonce.
  // assertions: the `sub` of each workload assertion the jwt-bearer grant accepted.
  const stats = { tokenRequests: 0, authorizations: 0, registrations: 0, jwksFetches: 0, introspections: 0, grants: [], proofs: 0, nonceChallenges: 0, assertions: [] }
  const errors = []

  const server = http.createServer((req, res) => handler(req, res))
  await new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", resolve)
  })
  const port = server.address().port
  const issuer = `http://127.0.0.1:${port}`

  const signingKey = (wanted) => keys.find((k) => k.alg === wanted)

  function resourceAllowed(indicator) {
    if (audiences.has(indicator)) return true
    if (!anyLoopback) return false
    try {
      const u = new URL(indicator)
      return (u.protocol === "http:" || u.protocol === "https:") && u.hostname === "127.0.0.1" && u.hash === ""
    } catch {
      return false
    }
  }

  function configuration() {
    return {
      clients: [
        {
          client_id: "service",
          client_secret: clientSecrets.service,
          grant_types: ["client_credentials"],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: "client_secret_basic",
        },
        {
          client_id: "service-opaque",
          client_secret: clientSecrets["service-opaque"],
          grant_types: ["client_credentials"],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: "client_secret_basic",
        },
        {
          client_id: "gateway",
          client_secret: clientSecrets.gateway,
          grant_types: ["client_credentials"],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: "client_secret_basic",
        },
        {
          client_id: "service-jwt",
          grant_types: ["client_credentials"],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: "private_key_jwt",
          token_endpoint_auth_signing_alg: "ES256",
          jwks: { keys: [serviceJwk] },
        },
        {
          client_id: "workload",
          token_endpoint_auth_method: "none",
          grant_types: [JWT_BEARER],
          response_types: [],
          redirect_uris: [],
        },
        {
          client_id: "toolnexus-cli",
          application_type: "native",
          token_endpoint_auth_method: "none",
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          redirect_uris: ["http://127.0.0.1/callback"],
        },
      ],
      jwks: { keys: keys.map((k) => k.jwk) },
      cookies: { keys: cookieKeys },
      // The JS client's own `sub` is the login typed into the form.
      findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub, email: `${sub}@example.com` }) }),
      claims: { openid: ["sub"], email: ["email"] },
      scopes: ["openid", "offline_access", "email", ...scopes],
      pkce: { required: () => true },
      // `refreshTokens: true`: every client allowed the grant gets one (else only with
      // offline_access and a consent prompt, which an MCP client does not ask for).
      ...(refreshTokens ? { issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token") } : {}),
      ttl: { AccessToken: ttl, ClientCredentials: ttl, AuthorizationCode: 60, Interaction: 600, Session: 3600, Grant: 3600, RefreshToken: 3600 },
      // A client-credentials token has no end user: its subject is the client (as the JWT format
      // does), so an introspection answer names one too.
      extraTokenClaims: async (_ctx, token) => (token.kind === "ClientCredentials" ? { sub: token.clientId } : undefined),
      features: {
        devInteractions: { enabled: true },
        clientCredentials: { enabled: true },
        dPoP: { enabled: true, nonceSecret, requireNonce: () => dpopNonce },
        introspection: { enabled: true },
        registration: { enabled: true },
        revocation: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, indicator, client) => {
            if (!resourceAllowed(indicator)) throw new oidcErrors.InvalidTarget(`not a resource of this server: ${indicator}`)
            const opaque = client?.clientId === "service-opaque"
            return {
              scope: scopes.join(" "),
              audience: indicator,
              accessTokenTTL: ttl,
              accessTokenFormat: opaque ? "opaque" : "jwt",
              ...(opaque ? {} : { jwt: { sign: { alg, kid: signingKey(alg).kid } } }),
            }
          },
        },
      },
    }
  }

  let provider
  function build() {
    const p = new Provider(issuer, configuration())
    // oidc-provider has no jwt-bearer grant: this one verifies the workload's assertion (its
    // issuer's key, audience this issuer, not expired) and issues a token for the client, as
    // client_credentials would.
    p.registerGrantType(
      JWT_BEARER,
      async (ctx) => {
        const { assertion, resource, scope } = ctx.oidc.params
        let claims
        try {
          ;({ payload: claims } = await jwtVerify(assertion ?? "", workloadKey.publicKey, { issuer: workloadIssuer, audience: issuer }))
        } catch (e) {
          throw new oidcErrors.InvalidGrant(`the assertion is not valid: ${e.code ?? e.message}`)
        }
        stats.assertions.push(claims.sub)
        const token = new ctx.oidc.provider.ClientCredentials({ client: ctx.oidc.client, scope: scope || undefined })
        if (resource) {
          const info = configuration().features.resourceIndicators.getResourceServerInfo(ctx, resource, ctx.oidc.client)
          token.resourceServer = new ctx.oidc.provider.ResourceServer(resource, info)
        }
        ctx.body = { access_token: await token.save(), token_type: "Bearer", expires_in: token.expiration, scope: token.scope }
      },
      ["assertion", "resource", "scope"],
    )
    p.on("server_error", (_ctx, err) => errors.push(err))
    // Counts, and keeps every token the token endpoint hands out.
    p.use(async (ctx, next) => {
      const path = ctx.path
      await next()
      if (path === "/jwks") stats.jwksFetches++
      else if (path === "/token/introspection") stats.introspections++
      else if (path === "/reg" && ctx.status === 201) stats.registrations++
      else if (path === "/auth" && ctx.method === "GET") stats.authorizations++
      else if (path === "/token") {
        stats.tokenRequests++
        stats.grants.push(`${ctx.oidc?.params?.grant_type} ${ctx.oidc?.client?.clientAuthMethod ?? "?"}`)
        if (ctx.get("dpop")) stats.proofs++
        if (ctx.body?.error === "use_dpop_nonce") stats.nonceChallenges++
        const body = ctx.body
        if (body && typeof body === "object")
          for (const k of ["access_token", "refresh_token", "id_token"]) if (typeof body[k] === "string") minted.push(body[k])
      }
    })
    return p
  }
  provider = build()
  let handler = provider.callback()

  const discovery = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()

  /** Signs `claims` (over the defaults) with one of the IdP's own private keys. */
  async function signWith(claims, { kid, alg: wanted = alg, key, header = {} } = {}, defaultKey) {
    const payload = {
      iss: issuer,
      ...(audiences.size === 1 ? { aud: [...audiences][0] } : {}),
      sub: "alice",
      scope: scopes.join(" "),
      iat: Math.floor(Date.now() / 1000),
      exp: Math.floor(Date.now() / 1000) + ttl,
      jti: randomUUID(),
      ...claims,
    }
    for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k]
    let token
    if (wanted === "none") {
      token = `${b64url({ alg: "none", typ: "at+jwt", ...header })}.${b64url(payload)}.`
    } else {
      const chosen = key ? { privateKey: key, kid } : kid !== undefined && !defaultKey ? keys.find((k) => k.kid === kid) : defaultKey ?? signingKey(wanted)
      if (!chosen) throw new Error(`no key ${kid ?? wanted} in the IdP's keystore`)
      const protectedHeader = { alg: wanted, typ: "at+jwt", kid: kid ?? chosen.kid, ...header }
      for (const [k, v] of Object.entries(protectedHeader)) if (v === undefined) delete protectedHeader[k]
      token = await new SignJWT(payload).setProtectedHeader(protectedHeader).sign(chosen.privateKey)
    }
    minted.push(token)
    return token
  }

  async function tokenRequest(clientId, form) {
    const res = await fetch(discovery.token_endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecrets[clientId]}`).toString("base64")}`,
      },
      body: new URLSearchParams(form),
    })
    const body = await res.json()
    if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}: ${JSON.stringify(body)}`)
    return body
  }

  /**
   * Drives an authorisation URL as a browser would; resolves { status, url, text } of the last
   * page (the client's redirect listener's answer).
   */
  async function browse(url, { user = "alice", password = "anything", maxSteps = 25 } = {}) {
    const jar = new Map() // name -> { value, path }
    const cookieFor = (u) =>
      [...jar.entries()]
        .filter(([, c]) => u.pathname.startsWith(c.path))
        .map(([n, c]) => `${n}=${c.value}`)
        .join("; ")
    const keep = (res) => {
      for (const line of res.headers.getSetCookie()) {
        const [pair, ...attrs] = line.split(";").map((s) => s.trim())
        const eq = pair.indexOf("=")
        const name = pair.slice(0, eq)
        const value = pair.slice(eq + 1)
        const pathAttr = attrs.find((a) => a.toLowerCase().startsWith("path="))
        const expired = attrs.some((a) => /^expires=/i.test(a) && Date.parse(a.slice(8)) < Date.now()) || attrs.some((a) => /^max-age=0$/i.test(a))
        if (expired || value === "") jar.delete(name)
        else jar.set(name, { value, path: pathAttr ? pathAttr.slice(5) : "/" })
      }
    }
    let next = new URL(url)
    let init = { method: "GET" }
    for (let step = 0; step < maxSteps; step++) {
      if (next.origin !== new URL(issuer).origin) {
        // The client's redirect URI: a browser just loads it.
        const res = await fetch(next, { redirect: "follow" })
        return { status: res.status, url: next.href, text: await res.text() }
      }
      const headers = { ...(init.headers ?? {}) }
      const cookie = cookieFor(next)
      if (cookie) headers.cookie = cookie
      const res = await fetch(next, { ...init, headers, redirect: "manual" })
      keep(res)
      if (res.status >= 300 && res.status < 400) {
        next = new URL(res.headers.get("location"), next)
        init = { method: "GET" }
        continue
      }
      const text = await res.text()
      if (res.status !== 200) throw new Error(`authorisation server answered ${res.status} at ${next.pathname}: ${text.slice(0, 500)}`)
      const action = /<form[^>]*action="([^"]+)"[^>]*method="post"/i.exec(text)?.[1]
      const prompt = /name="prompt" value="([^"]+)"/.exec(text)?.[1]
      if (!action || !prompt) throw new Error(`no login or consent form at ${next.pathname}: ${text.slice(0, 500)}`)
      const form = prompt === "login" ? { prompt, login: user, password } : { prompt }
      next = new URL(action.replaceAll("&amp;", "&"), next)
      init = { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form).toString() }
    }
    throw new Error(`authorisation did not reach the redirect URI within ${maxSteps} steps`)
  }

  return {
    issuer,
    port,
    discovery,
    audiences,
    stats,
    minted,
    /** Errors the provider met (a test can assert there are none). */
    errors,
    /** The public JWKS (what /jwks serves). */
    get jwks() {
      return { keys: keys.map((k) => k.pub) }
    },
    /** The public JWKS of the foreign key (what another key server would publish). */
    get foreignJwks() {
      return { keys: [foreign.pub] }
    },
    /** The current signing key's kid (of the access tokens' algorithm, or of `wanted`). */
    kid(wanted = alg) {
      return signingKey(wanted).kid
    },
    /** The client the introspection endpoint takes, for `oauth.introspection`. */
    introspection: { clientId: "gateway", clientSecret: clientSecrets.gateway, endpoint: discovery.introspection_endpoint },
    /** Secrets of the confidential clients and the private_key_jwt key (to grep output for). */
    secrets: [...Object.values(clientSecrets), serviceKeyPem],
    /** A workload's token for the jwt-bearer grant: `claims` over { iss, aud: this issuer, sub, iat, exp }. */
    async workloadSign(claims = {}) {
      const now = Math.floor(Date.now() / 1000)
      const token = await new SignJWT({ iss: workloadIssuer, aud: issuer, sub: "system:serviceaccount:agents:runner", iat: now, exp: now + 600, ...claims })
        .setProtectedHeader({ alg: "ES256", typ: "JWT" })
        .sign(workloadKey.privateKey)
      minted.push(token)
      return token
    },
    /** The `service` client's secret, and the `service-jwt` client's PKCS#8 PEM key. */
    serviceSecret: clientSecrets.service,
    serviceKeyPem,
    /**
     * A JWT access token signed with one of the IdP's own keys. `claims` go over the defaults
     * (iss: the issuer, aud: the one audience when `audience` was a single string, sub "alice",
     * scope: every scope, iat: now, exp: now + ttl, jti); a claim given as `undefined` is
     * left out. `opts`: `alg` ("ES256", "RS256", or "none" for an unsigned token), `kid` (sign
     * with that key of the keystore), `key` (any private key, with `kid` as the header's),
     * `header` (over { alg, typ: "at+jwt", kid }; `undefined` removes a field).
     */
    sign: (claims = {}, opts = {}) => signWith(claims, opts),
    /** The same, signed with a key that is not in the IdP's JWKS (kid "foreign-…" unless `kid`). */
    foreignSign: (claims = {}, opts = {}) => signWith(claims, { ...opts, alg: opts.alg ?? foreign.alg }, foreign),
    /** An access token from the token endpoint: client_credentials for `resource`. */
    async clientCredentialsToken({ scope = scopes.join(" "), resource = [...audiences][0], format = "jwt" } = {}) {
      const clientId = format === "opaque" ? "service-opaque" : "service"
      const form = { grant_type: "client_credentials", scope }
      if (resource !== undefined) form.resource = resource
      return (await tokenRequest(clientId, form)).access_token
    },
    /** Adds a key of the access tokens' algorithm, makes it the signing key; resolves its kid. */
    async rotate() {
      const fresh = await makeKey(alg)
      keys.unshift(fresh)
      provider = build()
      handler = provider.callback()
      return fresh.kid
    },
    /** Drops a key from the keystore (and /jwks). */
    async retire(kid) {
      const at = keys.findIndex((k) => k.kid === kid)
      if (at < 0) throw new Error(`no key ${kid}`)
      if (keys.filter((k) => k.alg === keys[at].alg).length === 1) throw new Error(`${kid} is the last ${keys[at].alg} key`)
      keys.splice(at, 1)
      provider = build()
      handler = provider.callback()
    },
    browse,
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
