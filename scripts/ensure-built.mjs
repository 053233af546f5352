// Builds the native addon (debug) when no prebuilt one is present, so `npm run demo` works on a
// fresh clone after `npm install`.
import { readdirSync } from "node:fs"
import { execSync } from "node:child_process"

const built = readdirSync(".").some((f) => f.startsWith("toolnexus.") && f.endsWith(".node"))
if (!built) {
  console.error("toolnexus: building the native addon (first run only, about two minutes)…")
  execSync("npm run build:debug", { stdio: "inherit" })
}
