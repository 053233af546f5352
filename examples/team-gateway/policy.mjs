// The team gateway's policy (toolnexus serve --hooks policy.mjs): what no curation or scope can
// say, because it depends on what a call asks or answers.

// UTC hours writes are allowed in: TEAM_GATEWAY_HOURS=8-19 (the default).
const [from, to] = (process.env.TEAM_GATEWAY_HOURS ?? "8-19").split("-").map(Number)
const OFFICE_HOURS = { from, to }
const WRITES = /^(docs_(write|edit|create)_|github_(create|update|push)_|file_issue$|memory_(create|add|delete)_)/
const SECRET = /\b(ghp_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{40,}|AKIA[0-9A-Z]{16})\b/g

export function beforeCall(call) {
  if (call.kind !== "tool") return
  // Writes only in office hours, when someone can review them.
  const hour = new Date().getUTCHours()
  if (WRITES.test(call.tool) && (hour < OFFICE_HOURS.from || hour >= OFFICE_HOURS.to)) {
    return { deny: `${call.tool} changes things: it is allowed from ${OFFICE_HOURS.from}:00 to ${OFFICE_HOURS.to}:00 UTC` }
  }
  // Nothing under the documents folder's private part, whatever the tool.
  for (const value of Object.values(call.arguments)) {
    if (typeof value === "string" && /(^|\/)private(\/|$)/.test(value)) return { deny: "the private folder is not served" }
  }
}

export function afterCall(call) {
  if (call.kind !== "tool") return
  // Tokens never leave the gateway, whoever wrote them where.
  let redacted = false
  const content = call.result.content.map((part) => {
    const text = part.type === "text" ? part.text.replace(SECRET, "[redacted]") : undefined
    if (text === undefined || text === part.text) return part
    redacted = true
    return { ...part, text }
  })
  return redacted ? { ...call.result, content } : undefined
}
