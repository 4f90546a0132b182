// PRE-4 (difference): an approved call is refused on continuation when toolApproval replaced its
// input before asking: the approval request carries the model's original input (inputSchemaInput),
// the SDK re-validates that, finds it differs from the approved input and answers
// InvalidToolInputError instead of running the tool (documented: docs/03-agents/06-tool-approvals.mdx:282-285).
// An in-place write is not caught this way (see PIPE-5.mjs). ai 7.0.173, public API only.
// Run: python docs/implementations/repro.py docs/implementations/ai-7.0.173. Exit 0: it reproduces.
import { generateText, isStepCount, jsonSchema, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

const usage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }
const answer = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] })
const model = () => new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => prompt.at(-1)?.role === 'tool'
    ? answer([{ type: 'text', text: 'done' }], 'stop')
    : answer([{ type: 'tool-call', toolCallId: 'c1', toolName: 'transfer', input: '{"amount":100,"to":"ana"}' }], 'tool-calls'),
})

let ran = 0
const options = {
  tools: { transfer: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => { ran += 1; return 'sent' } }) },
  // the policy normalizes the recipient (a new input object), then asks a person
  toolApproval: ({ toolCall }) => { toolCall.input = { ...toolCall.input, to: toolCall.input.to.toUpperCase() }; return 'user-approval' },
  stopWhen: isStepCount(2),
}
const prompt = [{ role: 'user', content: 'pay ana' }]
const first = await generateText({ ...options, model: model(), messages: prompt })
const request = first.content.find((p) => p.type === 'tool-approval-request')
const reply = { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }] }
const second = await generateText({ ...options, model: model(), messages: [...prompt, ...first.response.messages, reply] })
const output = second.responseMessages.find((m) => m.role === 'tool')?.content[0]?.output
const refused = ran === 0 && output?.type === 'error-text' && output.value.includes('Approved tool input does not match the validated schema output.')
console.log(`${refused ? 'reproduces' : 'DOES NOT REPRODUCE'}: approved with allowed-once, body ran ${ran} times, result ${JSON.stringify(output)}`)
process.exit(refused ? 0 : 1)
