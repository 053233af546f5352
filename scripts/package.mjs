// Packs what a release publishes, for this host only: the root package and the host's platform
// package (npm/<platform>/ with the addon copied in), as two installable tarballs in dist-pkg/.
//
// Usage: node scripts/package.mjs [--debug] [--platform P --addon FILE] [--out DIR]
//   (or `npm run package`)
//   --debug     package the addon already built at the root (`npm run build:debug`) instead of
//               building a release one first with `napi build --platform --release`.
//   --platform  pack npm/<P>/ (e.g. linux-arm64-gnu) rather than the host's, with --addon FILE
//               (a cross-built addon) as its `.node`; nothing is built (`npm run platforms`).
//   --out       where the tarballs go (default dist-pkg/, emptied first; a given one is not).
//
// The root tarball declares every platform package under npm/ as an optional dependency at the
// root's version, which is what `napi prepublish` writes into package.json at release time. The
// committed package.json leaves them out: until they exist on the registry, `npm ci` could not
// reconcile them with package-lock.json.
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")
const option = (name) => {
  const at = process.argv.indexOf(name)
  return at < 0 ? undefined : process.argv[at + 1]
}
const distDir = path.resolve(option("--out") ?? path.join(root, "dist-pkg"))
const debug = process.argv.includes("--debug")
const givenAddon = option("--addon") && path.resolve(option("--addon"))

/** The napi-rs `platformArchABI` of this host, e.g. `linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`. */
function hostPlatform() {
  const { platform, arch } = process
  if (platform === "linux") {
    process.report.excludeNetwork = true
    const glibc = process.report.getReport().header.glibcVersionRuntime
    return `linux-${arch}-${glibc ? "gnu" : "musl"}`
  }
  if (platform === "win32") return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

/** Runs a command and returns its stdout; with `log`, its output goes to stderr instead (ours stays the tarball list). */
function run(command, args, cwd, { log = false } = {}) {
  return execFileSync(command, args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", log ? 2 : "pipe", "inherit"],
    shell: process.platform === "win32", // npm and npx are .cmd shims there
  })
}

/** `npm pack` of `dir` into dist-pkg/; returns the tarball's absolute path. */
function pack(dir) {
  const [result] = JSON.parse(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", distDir], dir))
  return path.join(distDir, result.filename)
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"))
const rootPackage = readJson(path.join(root, "package.json"))
const platform = option("--platform") ?? hostPlatform()
if (option("--platform") && !givenAddon) throw new Error("--platform needs --addon FILE (the addon built for it)")
const platformDir = path.join(root, "npm", platform)
const addon = `${rootPackage.napi.binaryName}.${platform}.node`

if (!fs.existsSync(path.join(platformDir, "package.json"))) {
  throw new Error(`no npm/${platform}/package.json: this host is not one of the release targets (napi.targets)`)
}
if (readJson(path.join(platformDir, "package.json")).version !== rootPackage.version) {
  throw new Error(`npm/${platform}/package.json is not at version ${rootPackage.version}: run \`npx napi version\``)
}
if (givenAddon) {
  if (!fs.existsSync(givenAddon)) throw new Error(`no addon at ${givenAddon}`)
} else if (debug) {
  if (!fs.existsSync(path.join(root, addon))) throw new Error(`no ${addon} at the root: run \`npm run build:debug\` first`)
} else {
  run("npm", ["run", "build"], root, { log: true })
}

if (!option("--out")) fs.rmSync(distDir, { recursive: true, force: true })
fs.mkdirSync(distDir, { recursive: true })
// The platform package is packed from a copy, so npm/<platform>/ stays as committed.
const platformStage = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-platform-"))
let platformTarball
try {
  fs.copyFileSync(path.join(platformDir, "package.json"), path.join(platformStage, "package.json"))
  for (const extra of ["README.md", "LICENSE"]) {
    if (fs.existsSync(path.join(platformDir, extra))) fs.copyFileSync(path.join(platformDir, extra), path.join(platformStage, extra))
  }
  fs.copyFileSync(givenAddon ?? path.join(root, addon), path.join(platformStage, addon))
  platformTarball = pack(platformStage)
} finally {
  fs.rmSync(platformStage, { recursive: true, force: true })
}

// Stage the root package (exactly the files `npm pack` would take) with the optional dependencies.
const stage = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-package-"))
try {
  const [listing] = JSON.parse(run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], root))
  for (const { path: file } of listing.files) {
    fs.mkdirSync(path.dirname(path.join(stage, file)), { recursive: true })
    fs.copyFileSync(path.join(root, file), path.join(stage, file))
  }
  const optionalDependencies = {}
  for (const dir of fs.readdirSync(path.join(root, "npm")).sort()) {
    optionalDependencies[readJson(path.join(root, "npm", dir, "package.json")).name] = rootPackage.version
  }
  fs.writeFileSync(path.join(stage, "package.json"), JSON.stringify({ ...rootPackage, optionalDependencies }, null, 2) + "\n")
  const rootTarball = pack(stage)
  console.log(rootTarball)
  console.log(platformTarball)
} finally {
  fs.rmSync(stage, { recursive: true, force: true })
}
