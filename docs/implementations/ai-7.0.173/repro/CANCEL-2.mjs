// CANCEL-2 (difference): a run aborted before its tools are dispatched still runs them. The
// caller aborts generateText's abortSignal while toolApproval decides (the policy is the last
// thing before dispatch); the policy then lets the call through. executeTools dispatches every
// call of the step at once (mapWithConcurrency without a bound is Promise.all): each execute is
// invoked with an already-aborted signal, and only the next model call rejects (AbortError).
// With toolCallConcurrency below the number of calls the same SDK checks the signal before each
// dispatch and runs none, for contrast. ai 7.0.173, public API only.
// Run: python docs/implementations/repro.py docs/implementations/ai-7.0.173. Exit 0: it reproduces.
import { generateText, isStepCount, jsonSchema, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

const usage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }
const answer = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] })
const model = (calls) => new MockLanguageModelV4({
  doGenerate: async ({ prompt, abortSignal }) => {
    abortSignal?.throwIfAborted() // as a provider's fetch rejects on an aborted signal
    if (prompt.at(-1)?.role === 'tool') return answer([{ type: 'text', text: 'done' }], 'stop')
    return answer(Array.from({ length: calls }, (_, i) => ({ type: 'tool-call', toolCallId: `c${i}`, toolName: 'bash', input: '{"command":"make deploy"}' })), 'tool-calls')
  },
})

async function run(calls, toolCallConcurrency) {
  const controller = new AbortController()
  const ran = [] // [toolCallId, was its signal already aborted]
  const tools = { bash: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async (_, { toolCallId, abortSignal }) => { ran.push([toolCallId, abortSignal.aborted]); return 'deployed' } }) }
  const toolApproval = async () => { controller.abort(); return 'not-applicable' } // the caller cancels meanwhile
  try {
    await generateText({ model: model(calls), tools, toolApproval, abortSignal: controller.signal, stopWhen: isStepCount(2), prompt: 'deploy', ...(toolCallConcurrency ? { toolCallConcurrency } : {}) })
    return { ran, raised: null }
  } catch (e) {
    return { ran, raised: e.name }
  }
}

const one = await run(1)
const two = await run(2)
const bounded = await run(2, 1)
const ok = one.ran.length === 1 && one.ran[0][1] === true && two.ran.length === 2 && one.raised === 'AbortError' && bounded.ran.length === 0 && bounded.raised === 'AbortError'
console.log(`${ok ? 'reproduces' : 'DOES NOT REPRODUCE'}: aborted before dispatch -> bodies ran ${JSON.stringify(one.ran)} (one call), ${JSON.stringify(two.ran)} (two calls), then ${one.raised}; with toolCallConcurrency 1: ran ${JSON.stringify(bounded.ran)}, ${bounded.raised}`)
process.exit(ok ? 0 : 1)
