#!/usr/bin/env node
// Captures the real `tools/list` results of published MCP servers into
// bench/search/catalogs/<server>.json, for the tool-search retrieval set
// (issue 24). Not part of `npm test`: run it by hand when the set is renewed.
//
//   node bench/search/capture.mjs [--scratch DIR] [server ...]
//
// The servers come from a scratch folder made beforehand (nothing here
// touches the repo's package.json):
//   npm install --prefix DIR @modelcontextprotocol/server-filesystem \
//     @modelcontextprotocol/server-memory @modelcontextprotocol/server-sequential-thinking \
//     @modelcontextprotocol/server-github @modelcontextprotocol/server-gitlab \
//     @modelcontextprotocol/server-slack @modelcontextprotocol/server-puppeteer \
//     @modelcontextprotocol/server-postgres @playwright/mcp
//     (with PUPPETEER_SKIP_DOWNLOAD=1: no browser is needed to list tools)
//   python3 -m venv DIR/venv && DIR/venv/bin/pip install mcp-server-time \
//     mcp-server-fetch mcp-server-git
//   python3 -m venv DIR/venv-sqlite && DIR/venv-sqlite/bin/pip install mcp-server-sqlite "mcp<2"
// server-everything is taken from the repo's own node_modules.
//
// No server is given a secret: the ones that would need a token (github,
// gitlab, slack) get placeholder values, and list their tools without calling
// their backends. Each server runs in a fresh temporary folder, which is
// removed afterwards; the filesystem, git and sqlite servers only see it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const argv = process.argv.slice(2);
let scratch = process.env.SEARCH_SCRATCH || "/work/scratch/F";
const si = argv.indexOf("--scratch");
if (si >= 0) { scratch = argv[si + 1]; argv.splice(si, 2); }
const only = new Set(argv);

const nodeMods = join(scratch, "node_modules");

function npmServer(server, pkg, { root = nodeMods, args = () => [], env = {} } = {}) {
  return {
    server,
    version() {
      const p = JSON.parse(readFileSync(join(root, pkg, "package.json"), "utf8"));
      return `${p.name}@${p.version}`;
    },
    spawn(dir) {
      const p = JSON.parse(readFileSync(join(root, pkg, "package.json"), "utf8"));
      const bin = typeof p.bin === "string" ? p.bin : Object.values(p.bin)[0];
      return { command: process.execPath, args: [join(root, pkg, bin), ...args(dir)], env };
    },
  };
}

function pyServer(server, dist, { venv = "venv", args = () => [], env = {} } = {}) {
  const venvBin = join(scratch, venv, "bin");
  return {
    server,
    version() {
      const v = execFileSync(join(venvBin, "python"), ["-c",
        `import importlib.metadata as m; print(m.version(${JSON.stringify(dist)}))`]).toString().trim();
      return `${dist}@${v} (PyPI)`;
    },
    spawn(dir) {
      return { command: join(venvBin, dist), args: args(dir), env };
    },
  };
}

const SERVERS = [
  npmServer("everything", "@modelcontextprotocol/server-everything", { root: join(repo, "node_modules") }),
  npmServer("filesystem", "@modelcontextprotocol/server-filesystem", { args: (d) => [d] }),
  npmServer("memory", "@modelcontextprotocol/server-memory", { env: { MEMORY_FILE_PATH: "memory.jsonl" } }),
  npmServer("sequential-thinking", "@modelcontextprotocol/server-sequential-thinking"),
  npmServer("github", "@modelcontextprotocol/server-github", { env: { GITHUB_PERSONAL_ACCESS_TOKEN: "placeholder-not-a-token" } }),
  npmServer("gitlab", "@modelcontextprotocol/server-gitlab", { env: { GITLAB_PERSONAL_ACCESS_TOKEN: "placeholder-not-a-token", GITLAB_API_URL: "http://127.0.0.1:9/api/v4" } }),
  npmServer("slack", "@modelcontextprotocol/server-slack", { env: { SLACK_BOT_TOKEN: "placeholder-not-a-token", SLACK_TEAM_ID: "T0000000" } }),
  npmServer("puppeteer", "@modelcontextprotocol/server-puppeteer"),
  npmServer("postgres", "@modelcontextprotocol/server-postgres", { args: () => ["postgresql://127.0.0.1:9/none"] }),
  npmServer("playwright", "@playwright/mcp", { args: () => ["--headless"] }),
  pyServer("time", "mcp-server-time", { args: () => ["--local-timezone", "UTC"] }),
  pyServer("fetch", "mcp-server-fetch"),
  pyServer("git", "mcp-server-git", { args: (d) => ["--repository", d] }),
  // mcp-server-sqlite 2025.4.25 does not start against mcp 2.x (Server.list_resources is gone): a venv of its own with mcp<2.
  pyServer("sqlite", "mcp-server-sqlite", { venv: "venv-sqlite", args: (d) => ["--db-path", join(d, "bench.db")] }),
];

async function capture(s) {
  const dir = mkdtempSync(join(tmpdir(), `capture-${s.server}-`));
  if (s.server === "git") execFileSync("git", ["init", "-q", dir]);
  const { command, args, env } = s.spawn(dir);
  const transport = new StdioClientTransport({
    command, args, cwd: dir, stderr: "ignore",
    env: { PATH: process.env.PATH, HOME: dir, ...env },
  });
  const client = new Client({ name: "toolnexus-search-capture", version: "1.0.0" });
  try {
    await client.connect(transport);
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    const out = { server: s.server, package: s.version(), tools };
    writeFileSync(join(here, "catalogs", `${s.server}.json`), JSON.stringify(out, null, 2) + "\n");
    return tools.length;
  } finally {
    await client.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

mkdirSync(join(here, "catalogs"), { recursive: true });
let total = 0;
for (const s of SERVERS) {
  if (only.size && !only.has(s.server)) continue;
  try {
    const n = await Promise.race([
      capture(s),
      new Promise((_, rej) => setTimeout(() => rej(new Error("no answer in 30 s")), 30000).unref()),
    ]);
    total += n;
    console.log(`${s.server.padEnd(20)} ${String(n).padStart(3)} tools  ${s.version()}`);
  } catch (e) {
    console.log(`${s.server.padEnd(20)} FAILED: ${e.message}`);
  }
}
console.log(`total ${total} tools`);
process.exit(0);
