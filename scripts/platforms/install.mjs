// Installs the packed root package into an empty folder as a user on another platform gets it:
// `npm install` of toolnexus, whose optional dependencies are the platform packages, with npm's
// own --os/--cpu/--libc choosing among them. The platform packages are not on any registry yet,
// so each one packed here is named by an `overrides` entry pointing at its tarball; npm then picks
// (or skips) it by the `os`, `cpu` and `libc` in its package.json, as it would from the registry.
// Offline: nothing is fetched. Checks that exactly the expected platform package was installed.
//
// Usage: node scripts/platforms/install.mjs <dist dir> <into dir> <platform>
//   e.g.  node scripts/platforms/install.mjs target/platforms/dist target/platforms/install/linux-arm64-gnu linux-arm64-gnu
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"

const [dist, into, platform] = process.argv.slice(2).map((a, i) => (i < 2 ? path.resolve(a) : a))
if (!platform) {
  console.error("usage: node scripts/platforms/install.mjs <dist dir> <into dir> <platform>")
  process.exit(2)
}
// napi's platform names as npm's os / cpu / libc.
const [os, cpu, abi] = platform.split("-")
const flags = [`--os=${os}`, `--cpu=${cpu}`, ...(abi === "gnu" ? ["--libc=glibc"] : abi === "musl" ? ["--libc=musl"] : [])]

const tarballs = fs.readdirSync(dist).filter((f) => f.endsWith(".tgz"))
const rootTarball = tarballs.find((f) => /^toolnexus-\d/.test(f))
if (!rootTarball) throw new Error(`no root tarball (toolnexus-<version>.tgz) in ${dist}`)
const overrides = {}
for (const file of tarballs) {
  const match = /^(toolnexus-[a-z0-9]+-[a-z0-9]+(?:-[a-z]+)?)-\d/.exec(file)
  if (match) overrides[match[1]] = `file:${path.join(dist, file)}`
}
const expected = `toolnexus-${platform}`
if (!overrides[expected]) throw new Error(`no ${expected} tarball in ${dist}`)

fs.rmSync(into, { recursive: true, force: true })
fs.mkdirSync(into, { recursive: true })
const manifest = { name: "toolnexus-platform-check", private: true, dependencies: { toolnexus: `file:${path.join(dist, rootTarball)}` }, overrides }
fs.writeFileSync(path.join(into, "package.json"), JSON.stringify(manifest, null, 2) + "\n")
execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", ...flags], {
  cwd: into,
  stdio: ["ignore", "inherit", "inherit"],
  shell: process.platform === "win32", // npm is a .cmd shim there
})

const installed = fs.readdirSync(path.join(into, "node_modules")).filter((d) => d.startsWith("toolnexus-"))
if (installed.length !== 1 || installed[0] !== expected) {
  throw new Error(`npm ${flags.join(" ")} installed ${JSON.stringify(installed)}; expected only ${expected}`)
}
const addon = path.join(into, "node_modules", expected, `toolnexus.${platform}.node`)
if (!fs.existsSync(addon)) throw new Error(`${expected} has no ${path.basename(addon)}`)
console.log(`installed toolnexus + ${expected} (npm ${flags.join(" ")}; ${Object.keys(overrides).length} platform tarballs offered)`)
