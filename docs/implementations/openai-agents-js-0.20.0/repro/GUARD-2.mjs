// GUARD-2 (difference): a tool input guardrail whose return has no `behavior` (a buggy guardrail
// returning `true`, a string, an object of its own) is read as allow -- `return output.behavior ??
// { type: 'allow' };` (dist/utils/toolGuardrails.mjs:3) -- and the tool runs. A rejectContent
// closes the call (the control). @openai/agents-core 0.20.0, public API only.
// Run: python docs/implementations/repro.py docs/implementations/openai-agents-js-0.20.0. Exit 0: it reproduces.
import { Agent, run, setTracingDisabled, tool } from '@openai/agents-core'
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing'

setTracingDisabled(true)
async function ran(guardrailReturns) {
  let body = false
  const t = tool({
    name: 'grep', description: 'greps', parameters: { type: 'object' }, strict: false,
    inputGuardrails: [{ type: 'tool_input', name: 'g', run: async () => guardrailReturns }],
    execute: async () => { body = true; return [] },
  })
  const model = new ScriptedModel([[functionCall('grep', { path: '.' }, { callId: 'c1' })], [assistantMessage('done')]])
  await run(new Agent({ name: 'a', model, tools: [t] }), 'go')
  return body
}
let reproduces = !(await ran({ behavior: { type: 'rejectContent', message: 'no' } })) // control
for (const value of [true, 'outside the sandbox', { objecting: true }]) {
  const body = await ran(value)
  console.log(`guardrail returns ${JSON.stringify(value)}: the body ${body ? 'ran' : 'did not run'}`)
  reproduces &&= body
}
if (reproduces) process.exit(0)
console.log('DOES NOT REPRODUCE')
process.exit(1)
