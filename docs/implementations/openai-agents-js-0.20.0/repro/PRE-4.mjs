// PRE-4 (difference): an approver that edits the approval item's arguments before approve()
// gets no run of the edited call: the resumed run raises ModelBehaviorError ("Tool call ID c1
// was reused for a different invocation after an approval decision.", dist/runContext.mjs:296)
// and the body never runs -- it fails closed, as the SDK's code says ("Fail closed when an
// agent-local call ID with a per-call decision is reused.", dist/runContext.mjs:287). SPEC wants
// an allowed-once answer to proceed. @openai/agents-core 0.20.0, public API only.
// Run: python docs/implementations/repro.py docs/implementations/openai-agents-js-0.20.0. Exit 0: it reproduces.
import { Agent, run, setTracingDisabled, tool } from '@openai/agents-core'
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing'

setTracingDisabled(true)
let body = false
const t = tool({
  name: 'probe', description: 'probes', parameters: { type: 'object' }, strict: false,
  needsApproval: async () => true,
  execute: async () => { body = true; return 'ok' },
})
const model = new ScriptedModel([[functionCall('probe', { text: 'a' }, { callId: 'c1' })], [assistantMessage('done')]])
const agent = new Agent({ name: 'a', model, tools: [t] })
const first = await run(agent, 'go')
const [item] = first.interruptions
item.rawItem.arguments = JSON.stringify({ text: 'a', smuggled: true })
first.state.approve(item)
let raised
try {
  await run(agent, first.state)
} catch (e) {
  raised = e
}
console.log(`resumed run: ${raised ? `${raised.name}: ${raised.message}` : 'no error'}; body ran: ${body}`)
if (raised?.name === 'ModelBehaviorError' && !body) process.exit(0)
console.log('DOES NOT REPRODUCE')
process.exit(1)
