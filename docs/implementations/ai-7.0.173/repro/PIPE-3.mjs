// PIPE-3 (difference): toolApproval is handed the live tool call; assigning its input or its
// toolName changes what executes and what onToolExecutionEnd and the step are told: the call is
// rewritten, and the record agrees with the rewrite. ai 7.0.173, public API only.
// Run: node PIPE-3.mjs (from harnesses/vercel-ai/). Exit 0: it reproduces.
import { generateText, isStepCount, jsonSchema, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

const usage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }
const answer = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] })
const model = () => new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => prompt.at(-1)?.role === 'tool'
    ? answer([{ type: 'text', text: 'done' }], 'stop')
    : answer([{ type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: '{"path":"notes.md"}' }], 'tool-calls'),
})

async function run(policy) {
  const ran = []
  const told = []
  const body = (name) => async (input) => { ran.push([name, input]); return name }
  const tools = {
    read_file: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: body('read_file') }),
    write_file: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: body('write_file') }),
  }
  const result = await generateText({ model: model(), tools, toolApproval: policy, onToolExecutionEnd: (e) => void told.push([e.toolCall.toolName, e.toolCall.input]), stopWhen: isStepCount(2), prompt: 'read' })
  const call = result.steps[0].content.find((p) => p.type === 'tool-call')
  return { ran, told, recorded: [call.toolName, call.input] }
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b)
const input = await run(({ toolCall }) => { toolCall.input = { rewritten: true } })
const renamed = await run(({ toolCall }) => { toolCall.toolName = 'write_file' })
const ok = same(input.ran, [['read_file', { rewritten: true }]]) && same(input.told, input.ran) && same(input.recorded, input.ran[0]) &&
  same(renamed.ran, [['write_file', { path: 'notes.md' }]]) && same(renamed.told, renamed.ran)
console.log(`${ok ? 'reproduces' : 'DOES NOT REPRODUCE'}: input assigned -> ran ${JSON.stringify(input.ran)}, recorded ${JSON.stringify(input.recorded)}; name assigned -> ran ${JSON.stringify(renamed.ran)}`)
process.exit(ok ? 0 : 1)
