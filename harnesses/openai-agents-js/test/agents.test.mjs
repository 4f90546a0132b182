// The OpenAI Agents SDK (JavaScript) binding maps each stage onto the SDK API its header
// names, and builds nothing the SDK lacks. Run after `npm ci --prefix harnesses/openai-agents-js`
// with `node --test harnesses/openai-agents-js/test/` (CI runs it beside the gate).

import assert from 'node:assert/strict'
import { test } from 'node:test'

// The binding imports @toolreg/interpreter/stdio, which keeps stdout for protocol lines:
// the test runner's own reporting needs it back.
const write = process.stdout.write
const { Inexpressible } = await import('@toolreg/interpreter/stdio')
const { CAPABILITIES, MISSING, runScenario } = await import('../agents.mjs')
process.stdout.write = write

function scenario({ pre = [], guards = [], approval, calls = [{}], ...rest }) {
  return {
    id: 'harness-test',
    tools: [{ name: 'pay', description: 'moves money', parameters: { type: 'object' }, execute: [{ observe: 'arguments' }, { return: 'sent' }] }],
    preExecute: pre.map((steps, i) => ({ id: `policy-${i}`, steps })),
    guards: guards.map((steps, i) => ({ id: `guard-${i}`, steps })),
    ...(approval ? { approval: { steps: [{ return: approval }] } } : {}),
    actions: calls.map((call, i) => ({ call: { callId: `c${i}`, name: 'pay', arguments: { to: 'ana' }, agent: 'main', ...call } })),
    ...rest,
  }
}

const entered = (trace, stage) => trace.events.filter((e) => e.stage === stage && e.at === 'enter')

test('every capability it lacks is declared with its reason; wrappers are not simulated', async () => {
  for (const missing of ['wrappers', 'finalizer', 'classifier', 'code-mode']) {
    assert.ok(!CAPABILITIES.includes(missing))
    assert.ok(MISSING[missing].length > 10)
  }
  await assert.rejects(runScenario({ ...scenario({}), wrappers: [{ id: 'w', steps: [{ delegate: true }] }] }), Inexpressible)
})

test('two pre-execute listeners are not chained by the harness: skipped (a tool has one needsApproval)', async () => {
  await assert.rejects(runScenario(scenario({ pre: [[{ delegate: true }], [{ return: { kind: 'allow' } }]] })), Inexpressible)
})

test('a guard that returns a reason is a rejectContent: the body never runs, the call is an error', async () => {
  const trace = await runScenario(scenario({ guards: [[{ return: 'outside the sandbox' }]] }))
  assert.equal(entered(trace, 'body').length, 0)
  assert.equal(trace.actions[0].result.isError, true)
  assert.match(trace.actions[0].result.content[0].text, /outside the sandbox/)
})

test('ask interrupts; allowed-once resumes with state.approve and runs the body; rejected does not', async () => {
  const asked = scenario({ pre: [[{ return: { kind: 'ask', reason: 'moves money' } }]] })
  const pending = await runScenario(asked)
  assert.ok('interrupted' in pending.actions[0])
  const approved = await runScenario({ ...asked, approval: { steps: [{ return: 'allowed-once' }] } })
  assert.equal(entered(approved, 'body').length, 1)
  assert.equal(approved.actions[0].result.isError, false)
  const rejected = await runScenario({ ...asked, approval: { steps: [{ return: 'rejected' }] } })
  assert.equal(entered(rejected, 'body').length, 0)
  assert.equal(rejected.actions[0].result.isError, true)
})

test('a resumed run that asks again for the same approvals ends (interrupted), never loops', async () => {
  const asked = scenario({ pre: [[{ return: { kind: 'ask', reason: 'r' } }]] })
  const trace = await runScenario({ ...asked, approval: { steps: [{ abort: true }, { return: 'allowed-once' }] } })
  assert.ok('interrupted' in trace.actions[0] || 'raised' in trace.actions[0])
  assert.equal(entered(trace, 'body').length, 0)
})

test('schemas are the Responses request body the SDK builds, envelope dropped by the one projection', async () => {
  const trace = await runScenario({ ...scenario({ calls: [] }), actions: [{ schemas: {} }] })
  assert.deepEqual(Object.keys(trace.actions[0].schemas[0]).sort(), ['description', 'name', 'parameters'])
})
