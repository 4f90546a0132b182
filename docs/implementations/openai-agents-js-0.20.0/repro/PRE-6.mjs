// PRE-6 (difference): a needsApproval callback that returns no boolean (undefined, null, 0, '')
// is read by truthiness, and the tool runs without an approval interruption
// (dist/runner/toolExecution.mjs:688: `if (!needsApproval) {`). Typed `Promise<boolean>`
// (dist/tool.d.ts:39); reported as openai/openai-agents-js#1803 / #1808, closed, the fix PRs
// closed unmerged. @openai/agents-core 0.20.0, public API only.
// Run: python docs/implementations/repro.py docs/implementations/openai-agents-js-0.20.0. Exit 0: it reproduces.
import { Agent, run, setTracingDisabled, tool } from '@openai/agents-core'
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing'

setTracingDisabled(true)
async function outcome(answer) {
  let ran = false
  const t = tool({
    name: 'delete_all', description: 'deletes', parameters: { type: 'object' }, strict: false,
    needsApproval: async () => answer,
    execute: async () => { ran = true; return 'deleted' },
  })
  const model = new ScriptedModel([[functionCall('delete_all', {}, { callId: 'c1' })], [assistantMessage('done')]])
  const result = await run(new Agent({ name: 'a', model, tools: [t] }), 'go')
  return ran ? 'ran' : result.interruptions.length > 0 ? 'interrupted' : 'not run'
}
let reproduces = (await outcome(true)) === 'interrupted' // control
for (const answer of [undefined, null, 0, '']) {
  const got = await outcome(answer)
  console.log(`needsApproval -> ${JSON.stringify(answer) ?? 'undefined'}: ${got}`)
  reproduces &&= got === 'ran'
}
if (reproduces) process.exit(0)
console.log('DOES NOT REPRODUCE')
process.exit(1)
