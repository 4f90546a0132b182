// CANCEL-4 (difference): a function tool's timeoutMs races the body (invokeFunctionToolWithTimeout,
// dist/tool.mjs:563-640: `Promise.race([invocationPromise, new Promise(... setTimeout ...)])`): on
// timeout the call's result ('Tool ... timed out after 5ms.') is published and the run goes on
// while the body is still running; it aborts details.signal, but does not wait for the body to
// settle. A body that finishes its side effect after the abort lands it after its call was
// reported finished. @openai/agents-core 0.20.0, public API only.
// Run: python docs/implementations/repro.py docs/implementations/openai-agents-js-0.20.0. Exit 0: it reproduces.
import { Agent, run, setTracingDisabled, tool } from '@openai/agents-core'
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing'

setTracingDisabled(true)
const log = []
const slow = tool({
  name: 'bash', description: 'runs a command', parameters: { type: 'object' }, strict: false,
  timeoutMs: 5,
  execute: async (input, ctx, details) => {
    await new Promise((resolve) => details.signal.addEventListener('abort', resolve, { once: true }))
    await new Promise((resolve) => setTimeout(resolve, 50)) // clean-up takes a while
    log.push('body settled')
    return 'partial'
  },
})
const model = new ScriptedModel([[functionCall('bash', { command: 'sleep 60' }, { callId: 'c1' })], [assistantMessage('done')]])
const result = await run(new Agent({ name: 'a', model, tools: [slow] }), 'go')
log.push('run returned')
const output = result.newItems.find((i) => i.type === 'tool_call_output_item')?.output
await new Promise((resolve) => setTimeout(resolve, 200))
console.log(`call output: ${JSON.stringify(output)}; order: ${log.join(' -> ')}`)
if (log[0] === 'run returned' && log[1] === 'body settled') process.exit(0)
console.log('DOES NOT REPRODUCE')
process.exit(1)
