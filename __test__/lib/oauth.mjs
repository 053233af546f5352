// What the oauth-*.test.mjs files share: an `authorize` that does what a browser does with the
// URL, the warnings emitted while some work runs, and the check that no token leaked into a text.
import assert from "node:assert/strict"

/** What a browser does with the URL: follow the redirects, here back to toolnexus's listener. */
export function fetchingAuthorize() {
  const urls = []
  const authorize = async (url) => {
    urls.push(url)
    const answer = await fetch(url)
    assert.equal(answer.status, 200, `the redirect listener answered ${answer.status}`)
  }
  return { authorize, urls }
}

/** Captures ToolnexusWarnings emitted while `work` runs. */
export async function withWarnings(work) {
  const warnings = []
  const onWarning = (w) => warnings.push(String(w.message))
  process.on("warning", onWarning)
  try {
    return { result: await work(), warnings }
  } finally {
    process.off("warning", onWarning)
  }
}

export function assertNoToken(text, server) {
  for (const token of server.tokens) assert.ok(!text.includes(token), `a token leaked into: ${text}`)
}
