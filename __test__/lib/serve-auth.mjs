// What the serve-auth-*.test.mjs files share: two static bearer tokens (the second with a
// subject and a scope), the gateway's tools (lib/gateway.mjs's startGateway), and JSON-RPC bodies.

export const TOKEN_A = "tn-static-a-7f3c9e1b2d4a6f80"
export const TOKEN_B = "tn-static-b-0a1b2c3d4e5f6789"
export const STATIC = [TOKEN_A, { token: TOKEN_B, subject: "bob", scopes: ["tools:read"] }]
export const ALL = ["up_add", "up_read_a", "up_read_b", "up_write_a", "up_admin", "whoami"]

export const call = (id, name, args = {}) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } })
export const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" }
