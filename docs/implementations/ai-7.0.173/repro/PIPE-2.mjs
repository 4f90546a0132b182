// PIPE-2 (difference): the parsed input is one unfrozen object handed by reference to
// toolApproval, the tool's execute and onToolExecutionEnd: a write by any of them is what the
// later ones see. (The model's JSON text is parsed once, so the caller's own object cannot
// reach it.) ai 7.0.173, public API only. Run: node PIPE-2.mjs (from harnesses/vercel-ai/).
import { generateText, isStepCount, jsonSchema, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

const usage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }
const answer = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] })
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => prompt.at(-1)?.role === 'tool'
    ? answer([{ type: 'text', text: 'done' }], 'stop')
    : answer([{ type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: '{"path":"notes.md","opts":{"n":1}}' }], 'tool-calls'),
})

const seen = {}
const tools = {
  read_file: tool({
    inputSchema: jsonSchema({ type: 'object' }),
    execute: async (input) => {
      seen.body = structuredClone(input)
      input.opts.n = 2 // the body writes its input too
      return 'ok'
    },
  }),
}
await generateText({
  model,
  tools,
  toolApproval: ({ toolCall }) => { seen.policy = toolCall.input; toolCall.input.path = null; return undefined },
  onToolExecutionEnd: (event) => { seen.observer = event.toolCall.input },
  stopWhen: isStepCount(2),
  prompt: 'read',
})
const ok = seen.body.path === null && seen.observer === seen.policy && seen.observer.opts.n === 2 && !Object.isFrozen(seen.policy)
console.log(`${ok ? 'reproduces' : 'DOES NOT REPRODUCE'}: the body got ${JSON.stringify(seen.body)}; the observer got the policy's own object, now ${JSON.stringify(seen.observer)}`)
process.exit(ok ? 0 : 1)
