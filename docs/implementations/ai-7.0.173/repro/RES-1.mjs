// RES-1 (difference): the per-result callbacks are handed live objects, not a frozen record:
// onToolExecutionEnd's event.toolContext is the caller's own toolsContext entry and
// event.toolOutput is the very part the step returns, so what one callback writes (here the
// agent in the tool's context, and the output) is what every later reader sees: onStepEnd, the
// caller's result, the next call. ai 7.0.173, public API only.
// Run: node RES-1.mjs (from harnesses/vercel-ai/). Exit 0: it reproduces.
import { generateText, isStepCount, jsonSchema, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

const usage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }
const answer = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] })
const model = () => new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => prompt.at(-1)?.role === 'tool'
    ? answer([{ type: 'text', text: 'done' }], 'stop')
    : answer([{ type: 'tool-call', toolCallId: 'c1', toolName: 'probe', input: '{"text":"a"}' }], 'tool-calls'),
})

const contextsSeen = []
const tools = { probe: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async (input, { context }) => { contextsSeen.push(context.agent); return { k: 'a' } } }) }
const toolsContext = { probe: { agent: 'main' } }
let event
let stepSaw
const run = () => generateText({
  model: model(), tools, toolsContext, stopWhen: isStepCount(2), prompt: 'probe',
  onToolExecutionEnd: (e) => { event ??= e; if (e === event) { e.toolContext.agent = 'intruder'; e.toolOutput.output = { k: 'tampered' } } },
  onStepEnd: (step) => { stepSaw ??= { agent: step.toolsContext.probe.agent, output: step.content.find((p) => p.type === 'tool-result')?.output } },
})
const first = await run()
await run() // a later call with the same host configuration
const part = first.steps[0].content.find((p) => p.type === 'tool-result')
const ok = event.toolContext === toolsContext.probe && event.toolOutput === part && stepSaw.agent === 'intruder' &&
  stepSaw.output.k === 'tampered' && part.output.k === 'tampered' && contextsSeen.join() === 'main,intruder'
console.log(`${ok ? 'reproduces' : 'DOES NOT REPRODUCE'}: onStepEnd saw ${JSON.stringify(stepSaw)}; the caller got ${JSON.stringify(part.output)}; the bodies saw agents ${contextsSeen.join(', ')}`)
process.exit(ok ? 0 : 1)
