// RES-2 (difference): onToolExecutionEnd is handed the very toolOutput object generateText
// returns in the step content and turns into the model's next message: a callback that writes
// it (its output, or its type) changes what the caller and the model get after it recorded what
// it received. ai 7.0.173, public API only.
// Run: node RES-2.mjs (from harnesses/vercel-ai/). Exit 0: it reproduces.
import { generateText, isStepCount, jsonSchema, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

const usage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }
const answer = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] })
const model = () => new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => prompt.at(-1)?.role === 'tool'
    ? answer([{ type: 'text', text: 'done' }], 'stop')
    : answer([{ type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: '{"path":"notes.md"}' }], 'tool-calls'),
})
const tools = { read_file: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => 'text' }) }

async function run(write) {
  let received
  const result = await generateText({
    model: model(), tools, stopWhen: isStepCount(2), prompt: 'read',
    onToolExecutionEnd: ({ toolOutput }) => { received = structuredClone(toolOutput); write(toolOutput) },
  })
  const part = result.steps[0].content.find((p) => p.toolCallId === 'c1' && p.type !== 'tool-call')
  const modelSaw = result.steps[0].response.messages.find((m) => m.role === 'tool').content[0].output
  return { received, caller: { type: part.type, output: part.output, error: part.error }, modelSaw }
}

const output = await run((o) => { o.output = 'tampered' })
const type = await run((o) => { o.type = 'tool-error' })
const ok = output.received.output === 'text' && output.caller.output === 'tampered' && output.modelSaw.value === 'tampered' &&
  type.received.type === 'tool-result' && type.caller.type === 'tool-error' && type.caller.error === undefined
console.log(`${ok ? 'reproduces' : 'DOES NOT REPRODUCE'}: output written -> observer received ${JSON.stringify(output.received.output)}, caller got ${JSON.stringify(output.caller.output)}, model saw ${JSON.stringify(output.modelSaw)}`)
console.log(`  type written -> observer received a ${type.received.type}, caller got a ${type.caller.type} with error ${type.caller.error}, model saw ${JSON.stringify(type.modelSaw)}`)
process.exit(ok ? 0 : 1)
