// The conformance fixture's tools of the 2026-07-28 era and of tasks: input-required results
// (SEP-2322) for elicitation, sampling and roots, request state, several rounds, and the task
// tools the tasks scenarios call.
import { defineTool } from "toolnexus"
import { askName, capability, confirmation, noArgs, question, sleepUnlessAborted, textOf } from "./fixture-shared.mjs"

/** The input-required and task tools. */
export function roundAndTaskTools() {
  return [
    // 2026-07-28 (SEP-2322): an elicitation / sampling / roots request inside a call goes out as
    // an input-required result under the key given, and the retried call resumes `run`.
    defineTool({
      name: "test_input_required_result_elicitation",
      description: "Asks the user for their name through an input-required result",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const answer = await capability(ctx, "elicit")(askName("What is your name?"), { key: "user_name" })
        return `Hello, ${answer.content?.name}!`
      },
    }),
    defineTool({
      name: "test_input_required_result_sampling",
      description: "Asks the client's model a question through an input-required result",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const result = await capability(ctx, "sample")(question("What is the capital of France?", 100), {
          key: "capital_question",
        })
        return textOf(result)
      },
    }),
    defineTool({
      name: "test_input_required_result_list_roots",
      description: "Asks the client for its roots through an input-required result",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const { roots } = await capability(ctx, "listRoots")({ key: "client_roots" })
        return `Roots: ${roots.map((r) => r.uri).join(", ")}`
      },
    }),
    // A retry is resumed only under the requestState its round went out with, so getting here
    // means the state was the server's own.
    defineTool({
      name: "test_input_required_result_request_state",
      description: "Confirms through an input-required result with requestState",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const answer = await capability(ctx, "elicit")(confirmation(), { key: "confirm" })
        return `state-ok: confirmed=${answer.content?.ok}`
      },
    }),
    defineTool({
      name: "test_input_required_result_tampered_state",
      description: "Confirms through an input-required result; a changed requestState is refused",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const answer = await capability(ctx, "elicit")(confirmation(), { key: "confirm" })
        return `confirmed=${answer.content?.ok}`
      },
    }),
    defineTool({
      name: "test_input_required_result_multiple_inputs",
      description: "Asks for a name, a greeting and the roots in one input-required result",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const [name, greeting, { roots }] = await Promise.all([
          capability(ctx, "elicit")(askName("What is your name?"), { key: "user_name" }),
          capability(ctx, "sample")(question("Generate a greeting", 50), { key: "greeting" }),
          capability(ctx, "listRoots")({ key: "client_roots" }),
        ])
        return `${textOf(greeting)} ${name.content?.name} (${roots.length} roots)`
      },
    }),
    defineTool({
      name: "test_input_required_result_multi_round",
      description: "Asks two questions, one input-required round each",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const elicit = capability(ctx, "elicit")
        const name = await elicit(askName("Step 1: What is your name?"), { key: "step1" })
        const color = await elicit(
          {
            message: "Step 2: What is your favorite color?",
            requestedSchema: { type: "object", properties: { color: { type: "string" } }, required: ["color"] },
          },
          { key: "step2" },
        )
        return `${name.content?.name} likes ${color.content?.color}`
      },
    }),
    // Asks for elicitation and sampling at once: what the client did not declare is refused
    // (and not sent), the rest goes out.
    defineTool({
      name: "test_input_required_result_capabilities",
      description: "Asks only for what the client declared it can answer",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const [name, answer] = await Promise.allSettled([
          capability(ctx, "elicit")(askName("What is your name?")),
          capability(ctx, "sample")(question("What is the capital of France?", 100)),
        ])
        return `elicitation ${name.status}, sampling ${answer.status}`
      },
    }),
    // server-stateless's diagnostic tools (SEP-2575).
    defineTool({
      name: "test_missing_capability",
      description: "Needs sampling: without the client's sampling capability the call fails with -32021",
      inputSchema: noArgs,
      async run(_args, ctx) {
        return textOf(await capability(ctx, "sample")(question("Say hello", 20)))
      },
    }),
    defineTool({
      name: "test_streaming_elicitation",
      description: "Elicits mid-call: in the 2026-07-28 era only as an input-required result, never a request",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const answer = await capability(ctx, "elicit")(askName("What is your name?"))
        return `Hello, ${answer.content?.name}!`
      },
    }),
    // The tasks extension's scenarios (io.modelcontextprotocol/tasks): tools served as tasks.
    defineTool({
      name: "greet",
      description: "Greets by name (never a task)",
      inputSchema: { type: "object", properties: { name: { type: "string" } } },
      run: ({ name }) => `Hello, ${name}!`,
    }),
    defineTool({
      name: "slow_compute",
      description: "Sleeps `seconds` seconds, then answers; a cancel ends it",
      inputSchema: { type: "object", properties: { seconds: { type: "number" }, label: { type: "string" } } },
      task: "optional",
      async run({ seconds = 0, label = "" }, ctx) {
        await sleepUnlessAborted(seconds * 1000, ctx.signal)
        return `computed ${label} after ${seconds}s`
      },
    }),
    defineTool({
      name: "failing_job",
      description: "Runs a moment, then reports a tool error",
      inputSchema: noArgs,
      task: "required",
      async run(_args, ctx) {
        await sleepUnlessAborted(500, ctx.signal)
        return { output: "the job failed", isError: true }
      },
    }),
    defineTool({
      name: "protocol_error_job",
      description: "Fails rather than answers",
      inputSchema: noArgs,
      task: "optional",
      async run() {
        throw new Error("the job broke")
      },
    }),
    defineTool({
      name: "confirm_delete",
      description: "Asks the user to confirm before deleting a file",
      inputSchema: { type: "object", properties: { filename: { type: "string" } } },
      task: "optional",
      async run({ filename = "" }, ctx) {
        const answer = await capability(ctx, "elicit")(confirmation(), { key: "confirm" })
        return answer.action === "accept" ? `deleted ${filename}` : `kept ${filename}`
      },
    }),
    defineTool({
      name: "multi_input",
      description: "Asks two questions at once",
      inputSchema: noArgs,
      task: "optional",
      async run(_args, ctx) {
        const elicit = capability(ctx, "elicit")
        const [a, b] = await Promise.all([
          elicit(askName("First name?"), { key: "first" }),
          elicit(askName("Last name?"), { key: "last" }),
        ])
        return `${a.content?.name} ${b.content?.name}`
      },
    }),
    defineTool({
      name: "test_tool_with_task",
      description: "Asks for a name in the call, then answers as a task",
      inputSchema: noArgs,
      task: "required",
      deferTask: true,
      async run(_args, ctx) {
        const answer = await capability(ctx, "elicit")(askName("What is your name?"), { key: "user_name" })
        await capability(ctx, "startTask")()
        return `Hello, ${answer.content?.name}!`
      },
    }),
  ]
}
