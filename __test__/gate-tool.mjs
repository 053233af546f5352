// A served tool for tests of calls in flight (stop, cancel, DELETE).
import { defineTool } from "toolnexus"

/** A tool whose calls wait until released, reporting how each one ended. */
export function gateTool() {
  const endings = []
  const waiting = []
  const tool = defineTool({
    name: "gate",
    run: (_args, ctx) =>
      new Promise((resolve) => {
        const finish = (how) => {
          endings.push(how)
          resolve(how)
        }
        ctx.signal?.addEventListener("abort", () => finish("aborted"))
        waiting.push(() => finish("released"))
      }),
  })
  return { tool, endings, waiting }
}
