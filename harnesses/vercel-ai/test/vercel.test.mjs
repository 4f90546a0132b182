// The Vercel AI SDK binding maps each stage onto the SDK API its docstring names, and
// builds nothing the SDK lacks. Run after `npm ci --prefix harnesses/vercel-ai` with
// `node --test harnesses/vercel-ai/test/` (CI runs it beside the gate).

import assert from 'node:assert/strict'
import { test } from 'node:test'

// The binding imports @toolreg/interpreter/stdio, which keeps stdout for protocol lines:
// the test runner's own reporting needs it back.
const write = process.stdout.write
const { Inexpressible } = await import('@toolreg/interpreter/stdio')
const { CAPABILITIES, MISSING, runScenario } = await import('../vercel.mjs')
process.stdout.write = write

const ASK = { kind: 'ask', reason: 'moves money' }

function scenario({ pre = [], observers = [], approval, calls = [{}], tools, ...rest }) {
  return {
    id: 'harness-test',
    tools: tools ?? [{ name: 'pay', description: 'moves money', parameters: { type: 'object' }, execute: [{ observe: 'arguments' }, { return: 'sent' }] }],
    preExecute: pre.map((steps, i) => ({ id: `policy-${i}`, steps })),
    observers: observers.map((steps, i) => ({ id: `observer-${i}`, steps })),
    ...(approval ? { approval: { steps: [{ return: approval }] } } : {}),
    actions: calls.map((call, i) => ({ call: { callId: `c${i}`, name: 'pay', arguments: { amount: 5, memo: [] }, agent: 'main', ...call } })),
    ...rest,
  }
}

const entered = (trace, stage) => trace.events.filter((e) => e.stage === stage && e.at === 'enter')
const bodySaw = (trace) => trace.events.filter((e) => e.stage === 'body' && e.what === 'arguments').map((e) => e.observed)

test('guards are missing: toolApproval is the one policy hook, nothing after the approval can deny', async () => {
  assert.ok(!CAPABILITIES.includes('guards'))
  assert.match(MISSING.guards, /toolApproval/)
  await assert.rejects(runScenario({ ...scenario({}), guards: [{ id: 'g', steps: [{ return: 'no' }] }] }), Inexpressible)
})

test('two pre-execute listeners for one run are not chained by the harness: skipped', async () => {
  await assert.rejects(runScenario(scenario({ pre: [[{ delegate: true }], [{ return: { kind: 'allow' } }]] })), Inexpressible)
  // one per agent is one per run: expressible
  const trace = await runScenario({
    ...scenario({}),
    preExecute: [
      { id: 'main-policy', scope: 'main', steps: [{ return: { kind: 'allow' } }] },
      { id: 'helper-policy', scope: 'helper', steps: [{ return: { kind: 'deny', reason: 'no' } }] },
    ],
  })
  assert.equal(trace.actions[0].result.isError, false)
})

test('the listener decides every time the SDK asks, the resumed run included', async () => {
  const append = { mutate: { target: 'arguments', path: ['memo'], op: 'append', value: 'x' } }
  const trace = await runScenario(scenario({ pre: [[append, { return: ASK }]], approval: 'allowed-once' }))
  assert.equal(entered(trace, 'pre-execute').length, 2)
  const request = trace.events.find((e) => e.stage === 'approval' && e.at === 'request')
  assert.deepEqual(request.arguments, { amount: 5, memo: ['x'] })
  assert.deepEqual(bodySaw(trace), [{ amount: 5, memo: ['x', 'x'] }])
})

test("decisions are said in the SDK's status vocabulary; a mistake stays one", async () => {
  const outcome = async (decision) => {
    const trace = await runScenario(scenario({ pre: [decision === undefined ? [] : [{ return: decision }]] }))
    return { ran: entered(trace, 'body').length === 1, answer: trace.actions[0] }
  }
  assert.equal((await outcome({ kind: 'allow' })).ran, true) // 'not-applicable'
  const deny = await outcome({ kind: 'deny', reason: 'no' }) // {type: 'denied', reason}
  assert.deepEqual([deny.ran, deny.answer.result.error.message], [false, 'no'])
  assert.equal((await outcome({ kind: 'deny' })).ran, false) // a denial without reason is one in the SDK
  assert.match((await outcome(ASK)).answer.interrupted, /tool-approval-request pending/) // 'user-approval'
  assert.equal((await outcome({ kind: 'maybe' })).ran, true) // {type: 'maybe'}: no case of the switch
  assert.equal((await outcome('allow')).ran, true) // the string status 'allow': likewise
  assert.equal((await outcome(undefined)).ran, true) // undefined is 'not-applicable' (d.ts:3542)
})

test('observers: an executed call through onToolExecutionEnd, a call that did not run through its step part', async () => {
  const observe = [[{ observe: 'result' }]]
  const ran = await runScenario(scenario({ observers: observe }))
  assert.equal(entered(ran, 'result').length, 1)
  const denied = await runScenario(scenario({ pre: [[{ return: { kind: 'deny', reason: 'no' } }]], observers: observe }))
  const [seen] = entered(denied, 'result')
  assert.deepEqual(seen.observed, denied.actions[0].result)
  assert.equal(seen.observed.error.message, 'no')
  const unknown = await runScenario(scenario({ observers: observe, calls: [{ name: 'missing' }] }))
  const [told] = entered(unknown, 'result')
  assert.equal(told.observed.error.info.code, 'UNKNOWN_TOOL')
  assert.deepEqual(told.observed, unknown.actions[0].result)
})

test('observers on resume: an approved call is told (onToolExecutionEnd), a rejected one has no callback', async () => {
  const approved = await runScenario(scenario({ pre: [[{ return: ASK }]], approval: 'allowed-once', observers: [[]] }))
  assert.equal(entered(approved, 'result').length, 1)
  const rejected = await runScenario(scenario({ pre: [[{ return: ASK }]], approval: 'rejected', observers: [[]] }))
  assert.equal(rejected.actions[0].result.isError, true)
  assert.equal(entered(rejected, 'result').length, 0)
})

test('schemas: the wire entry through modelEntry, its values the SDK objects themselves', async () => {
  const trace = await runScenario({
    id: 'harness-test',
    tools: [{ name: 'pay', description: 'moves money', parameters: { type: 'object', properties: { to: { type: 'string' } } }, execute: [] }],
    actions: [{ schemas: {}, mutate: { path: [0, 'parameters', 'properties', 'to', 'type'], value: 'number' } }],
  })
  const [answer] = trace.actions
  assert.deepEqual(answer.schemas, [{ name: 'pay', description: 'moves money', parameters: { type: 'object', properties: { to: { type: 'string' } } } }])
  assert.equal(answer.after[0].parameters.properties.to.type, 'number') // the write reached the next request
})
