// RES-1 (difference): a call the person denies when the run resumes gets its outcome, but no
// per-call callback tells of it. On the continuation generateText the denial (approved: false)
// is written into the run's response messages only, as a tool-result with output
// execution-denied: onToolExecutionEnd fires for executed calls, and the resumed run's
// onStepEnd content has no part for the call. (An approved call on resume does get
// onToolExecutionEnd, for contrast.) ai 7.0.173, public API only.
// Run: python docs/implementations/repro.py docs/implementations/ai-7.0.173. Exit 0: it reproduces.
import { generateText, isStepCount, jsonSchema, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

const usage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }
const answer = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] })
const model = () => new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => prompt.at(-1)?.role === 'tool'
    ? answer([{ type: 'text', text: 'done' }], 'stop')
    : answer([{ type: 'tool-call', toolCallId: 'c1', toolName: 'edit_file', input: '{"path":"README.md"}' }], 'tool-calls'),
})

async function resume(approved) {
  const told = [] // every per-call notification that names c1
  const options = {
    tools: { edit_file: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => 'written' }) },
    toolApproval: () => 'user-approval',
    stopWhen: isStepCount(2),
    onToolExecutionEnd: (event) => told.push(`onToolExecutionEnd(${event.toolCall.toolCallId})`),
    onStepEnd: (step) => {
      for (const part of step.content) if ((part.toolCallId ?? part.toolCall?.toolCallId) === 'c1') told.push(`onStepEnd(${part.type})`)
    },
  }
  const prompt = [{ role: 'user', content: 'edit the readme' }]
  const first = await generateText({ ...options, model: model(), messages: prompt })
  const request = first.content.find((p) => p.type === 'tool-approval-request')
  told.length = 0 // what the first run said (the tool call, the request) is not the outcome
  const reply = { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved, reason: 'the person said no' }] }
  const second = await generateText({ ...options, model: model(), messages: [...prompt, ...first.response.messages, reply] })
  const outcome = second.responseMessages.find((m) => m.role === 'tool')?.content.find((p) => p.toolCallId === 'c1')?.output
  return { told, outcome }
}

const denied = await resume(false)
const approved = await resume(true)
const ok = denied.outcome?.type === 'execution-denied' && denied.told.length === 0 && approved.told.includes('onToolExecutionEnd(c1)')
console.log(`${ok ? 'reproduces' : 'DOES NOT REPRODUCE'}: denied on resume -> outcome ${JSON.stringify(denied.outcome)}, callbacks [${denied.told}]; approved on resume -> callbacks [${approved.told}]`)
process.exit(ok ? 0 : 1)
