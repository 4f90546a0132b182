// PRE-6 (difference): a toolApproval that returns no known status lets the call run.
// `undefined` is documented as 'not-applicable' (docs/03-agents/06-tool-approvals.mdx:37); a
// status outside the four documented ones ('deny', {type: 'accept'}, {kind: 'deny'}, 1) matches
// no case of the status switch and is not blocked either. `null` throws (the run raises).
// ai 7.0.173, public API only.
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

async function runs(status) {
  let ran = false
  const tools = { edit_file: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => { ran = true; return 'written' } }) }
  try {
    await generateText({ model: model(), tools, toolApproval: () => status, stopWhen: isStepCount(2), prompt: 'edit' })
  } catch (e) {
    return `raised ${e.name}`
  }
  return ran ? 'ran' : 'blocked'
}

let failed = false
const expect = async (status, wanted, why) => {
  const got = await runs(status)
  const ok = got.startsWith(wanted)
  console.log(`${ok ? 'reproduces' : 'DOES NOT REPRODUCE'}: toolApproval returns ${JSON.stringify(status) ?? 'undefined'} -> ${got} (${why})`)
  failed ||= !ok
}
await expect(undefined, 'ran', 'documented: the same as not-applicable')
for (const status of ['deny', { type: 'accept' }, { type: 'reject', reason: 'no' }, { kind: 'deny' }, 1]) {
  await expect(status, 'ran', 'not one of the four statuses: no case of the switch, not blocked')
}
await expect('denied', 'blocked', 'the documented status, for contrast')
await expect(null, 'raised', 'a TypeError: the run raises, nothing runs')
process.exit(failed ? 1 : 0)
