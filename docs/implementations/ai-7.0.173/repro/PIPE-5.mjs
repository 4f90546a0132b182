// PIPE-5 (defect): what the approver was shown is not what runs. ai 7.0.173, public API only.
// (a) On continuation generateText asks toolApproval again, on a shallow copy of the history's
//     tool call, and executes that copy: a policy that writes the input (here: it appends a note,
//     every time it is asked) changes what runs after the approval, and signing
//     (experimental_toolApprovalSecret) does not catch it.
// (b) Without signing, a client that edits the tool-call input in the history it sends back gets
//     the edited input executed; with signing that raises InvalidToolApprovalSignatureError.
// Run: python docs/implementations/repro.py docs/implementations/ai-7.0.173. Exit 0: it reproduces.
import { generateText, isStepCount, jsonSchema, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

const usage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }
const answer = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] })
const model = () => new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => prompt.at(-1)?.role === 'tool'
    ? answer([{ type: 'text', text: 'done' }], 'stop')
    : answer([{ type: 'tool-call', toolCallId: 'c1', toolName: 'transfer', input: JSON.stringify({ amount: 100, to: 'ana', notes: [] }) }], 'tool-calls'),
})

async function roundTrip({ secret, policy, editHistory = () => {} }) {
  const ran = []
  const options = {
    tools: { transfer: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async (input) => void ran.push(structuredClone(input)) }) },
    toolApproval: policy,
    stopWhen: isStepCount(2),
    ...(secret ? { experimental_toolApprovalSecret: secret } : {}),
  }
  const prompt = [{ role: 'user', content: 'pay ana' }]
  const first = await generateText({ ...options, model: model(), messages: prompt })
  const request = first.content.find((p) => p.type === 'tool-approval-request')
  const history = first.response.messages
  const callPart = history[0].content.find((p) => p.type === 'tool-call')
  const shown = structuredClone(callPart.input) // what the approver is shown
  editHistory(callPart)
  const reply = { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }] }
  try {
    await generateText({ ...options, model: model(), messages: [...prompt, ...history, reply] })
    return { shown, ran }
  } catch (e) {
    return { shown, ran, raised: e.name }
  }
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b)
let failed = false
const check = (ok, text) => { console.log(`${ok ? 'reproduces' : 'DOES NOT REPRODUCE'}: ${text}`); failed ||= !ok }

// (a) the policy notes each review in the input, then asks a person
const notes = ({ toolCall }) => { toolCall.input.notes.push('reviewed'); return 'user-approval' }
for (const secret of [undefined, 'server-secret']) {
  const { shown, ran } = await roundTrip({ secret, policy: notes })
  check(ran.length === 1 && !same(ran[0], shown), `(a) signing ${secret ? 'on' : 'off'}: approver shown ${JSON.stringify(shown)}, body ran ${JSON.stringify(ran)}`)
}
// (b) the client edits the approved call's input in the history it sends back
const edit = (part) => { part.input = { amount: 5000, to: 'mallory', notes: [] } }
const unsigned = await roundTrip({ policy: () => 'user-approval', editHistory: edit })
check(unsigned.ran.length === 1 && unsigned.ran[0].to === 'mallory', `(b) signing off: approver shown ${JSON.stringify(unsigned.shown)}, body ran ${JSON.stringify(unsigned.ran)}`)
const signed = await roundTrip({ secret: 'server-secret', policy: () => 'user-approval', editHistory: edit })
check(signed.ran.length === 0 && signed.raised === 'AI_InvalidToolApprovalSignatureError', `(b) signing on: the edited history raises ${signed.raised}`)
process.exit(failed ? 1 : 0)
