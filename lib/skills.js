// @ts-check
// Skills to serve (the skills extension, SEP-2640): `defineSkill` (a skill given as files in
// memory) and the `skills` option of buildMcpServer and createToolkit (a folder of skills, or
// defined ones), checked and prepared once by the engine (src/serve/skills.rs): a skill that
// breaks a rule refuses them all, with the reason in words.
"use strict"

const path = require("node:path")
const binding = require("../binding.js")

/** Marks what defineSkill made. */
const SKILL = Symbol.for("toolnexus.skill")
/** Marks the load_skill tool (an MCP tool may be named so too). */
const SKILL_TOOL = Symbol.for("toolnexus.loadSkillTool")

/**
 * A skill given as files: `files` maps each path within the skill's folder (`SKILL.md`,
 * `references/FORMS.md`) to its text or bytes; `path` is where it is served under `skill://`
 * (default: the `name` of its SKILL.md's frontmatter).
 * @param {import("../index").DefineSkillOptions} opts
 * @returns {import("../index").SkillDefinition}
 */
function defineSkill(opts) {
  if (opts === null || typeof opts !== "object") throw new TypeError("toolnexus: defineSkill takes { files, path? }")
  const { files, path: at } = /** @type {any} */ (opts)
  if (at !== undefined && typeof at !== "string") throw new TypeError("toolnexus: defineSkill's path must be a string")
  if (files === null || typeof files !== "object" || Array.isArray(files)) {
    throw new TypeError('toolnexus: defineSkill\'s files must be an object of path -> text or bytes (with "SKILL.md")')
  }
  /** @type {Array<{ path: string, text?: string, bytes?: Uint8Array }>} */
  const list = []
  for (const [file, contents] of Object.entries(files)) {
    if (typeof contents === "string") list.push({ path: file, text: contents })
    else if (contents instanceof Uint8Array) list.push({ path: file, bytes: contents })
    else throw new TypeError(`toolnexus: defineSkill's file ${JSON.stringify(file)} must be a string or a Uint8Array`)
  }
  return /** @type {any} */ ({ [SKILL]: true, path: at, files: list })
}

/**
 * The `skills` option (a folder, or defineSkill's skills) prepared to serve; undefined when
 * absent. `where` names the option in errors.
 * @param {unknown} skills
 * @param {string} where
 * @returns {import("../binding").NativeSkills | undefined}
 */
function nativeSkills(skills, where) {
  if (skills === undefined) return undefined
  if (typeof skills === "string") return binding.prepareSkills({ folder: path.resolve(skills) })
  if (!Array.isArray(skills) || skills.some((s) => s === null || typeof s !== "object" || !s[SKILL])) {
    throw new TypeError(`toolnexus: ${where} must be a folder of skills (a string) or an array of defineSkill(...)`)
  }
  return binding.prepareSkills({ skills: skills.map((s) => ({ path: s.path, files: s.files })) })
}

module.exports = { defineSkill, nativeSkills }

/**
 * The `load_skill` tool: a model pulls a skill's instructions into its context by name, as
 * hosts let it. Its description lists each skill's name and description (read from `skills()`
 * whenever the tool is read: the skills a source lists now); a call loads the skill, checked as
 * `load()` checks it, and answers its instructions and the paths of its other files. Names
 * that two servers share are `<server>/<name>`.
 * @param {() => Array<{ name: string, description: string, server?: string, load: () => Promise<import("../index").LoadedSkill | Omit<import("../index").LoadedSkill, "read">> }>} skills
 * @returns {import("../index").Tool}
 */
function loadSkillTool(skills) {
  const keyed = () => {
    const list = skills()
    const shared = (/** @type {string} */ name) => list.filter((s) => s.name === name).length > 1
    // A name two skills share: a server's is `server/name`, the toolkit's own its path.
    const key = (/** @type {any} */ s) =>
      !shared(s.name) ? s.name : s.server ? `${s.server}/${s.name}` : String(s.uri).replace(/^skill:\/\//, "").replace(/\/SKILL\.md$/, "")
    return list.map((s) => /** @type {const} */ ([key(s), s]))
  }
  const { defineTool } = require("./tools.js")
  const tool = defineTool({
    name: "load_skill",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string", description: "The skill's name, as this tool's description lists it" } },
      required: ["name"],
    },
    run: async ({ name }) => {
      const all = keyed()
      const found = all.find(([key]) => key === name)
      if (!found) {
        throw new Error(`no skill named ${JSON.stringify(name)}; the skills are: ${all.map(([key]) => key).join(", ") || "(none)"}`)
      }
      const loaded = await found[1].load()
      const others = loaded.files === "dynamic" ? [] : loaded.files.filter((f) => f.path !== "SKILL.md").map((f) => f.path)
      const files = others.length > 0 ? `\n\nThe skill's other files: ${others.join(", ")}` : ""
      return `# Skill: ${found[0]}\n\n${loaded.body.trimEnd()}${files}`
    },
  })
  Object.defineProperty(tool, SKILL_TOOL, { value: true })
  Object.defineProperty(tool, "description", {
    enumerable: true,
    get: () => {
      const lines = keyed().map(([key, s]) => `- ${key}: ${s.description}`)
      return `Loads a skill: instructions for a kind of task. Load the one whose description fits the task before doing it. Skills:\n${lines.join("\n") || "(none)"}`
    },
  })
  return tool
}

/**
 * `loadSkillTool(sourceOrToolkit)`: the `load_skill` tool over a loadMcp source's skills, or a
 * toolkit's (its servers' and its own).
 * @param {unknown} from
 * @returns {import("../index").Tool}
 */
function loadSkillToolOf(from) {
  const f = /** @type {any} */ (from)
  if (f && typeof f.skills === "function") return loadSkillTool(() => f.skills())
  if (f && Array.isArray(f.skills)) return loadSkillTool(() => f.skills)
  throw new TypeError("toolnexus: loadSkillTool takes an McpSource (from loadMcp) or a Toolkit (from createToolkit)")
}

/**
 * A toolkit's own skills (prepared by `nativeSkills`) as its `skills()` lists them: each with
 * `load()`, from the served catalog (no request: the toolkit serves them itself).
 * @param {import("../binding").NativeSkills | undefined} native
 */
function ownSkills(native) {
  if (!native) return []
  return native.listed().map((skill) => ({
    ...skill,
    server: undefined,
    load: async () => {
      const loaded = native.load(skill.uri)
      if (!loaded) throw new Error(`the skill ${skill.uri} is no longer served`)
      return loaded
    },
  }))
}

module.exports.loadSkillTool = loadSkillTool
module.exports.loadSkillToolOf = loadSkillToolOf
module.exports.ownSkills = ownSkills
