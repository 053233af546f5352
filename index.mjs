// The ESM entry: loads the CommonJS entry (index.js) through require, so that an `import` does
// not pay for Node's translation of CommonJS into ES modules (about 30 ms of CPU on the
// development machine, see BENCHMARKS.md). The names are index.js's exports;
// __test__/entry.test.mjs checks that the two lists agree.
import { createRequire } from "node:module"

const toolnexus = createRequire(import.meta.url)("./index.js")

export const {
  answerToElicitResult,
  buildMcpServer,
  createToolkit,
  credentialsPath,
  definePrompt,
  defineResource,
  defineResourceTemplate,
  defineSkill,
  defineTool,
  describeContent,
  elicitationToRequest,
  expandEnvHeaders,
  exportSpans,
  exposedMcpTools,
  flushTelemetry,
  forgetCredentials,
  listMcpTools,
  loadMcp,
  loadSkillTool,
  parseMcpConfig,
  sanitize,
  storedCredentials,
} = toolnexus
export default toolnexus
