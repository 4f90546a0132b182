// The harness maps, it never simulates (README.md, "What is not expressible"): what it
// declares is upstream's own mechanism, and a batch -- for which dsh-tools has no driver
// of its own -- is not run by a driver written here.
//
//   npm ci --prefix harnesses/dsh && node harnesses/dsh/test/mapping.test.mjs
//
// (run directly, not under `node --test`: dsh.mjs loads @toolreg/interpreter/stdio, whose
// stdout guard sends the runner's own protocol to stderr; the exit code is the verdict.)

import assert from 'node:assert/strict'
import { test } from 'node:test'

import { Inexpressible } from '@toolreg/interpreter/stdio'

import { CAPABILITIES, MISSING, runActions, runScenario } from '../dsh.mjs'

test('scheduler is not declared, and says why', () => {
  assert.ok(!CAPABILITIES.includes('scheduler'))
  assert.match(MISSING.scheduler, /executeToolCalls of @deepseek-ai\/dsh-agent-loop/)
})

test('a batch action is inexpressible, not driven by the harness', async () => {
  const scenario = { actions: [{ batch: [{ callId: 'c0', name: 't', arguments: {} }] }] }
  const unused = () => assert.fail('no call may be made for a batch')
  await assert.rejects(
    runActions(scenario, { call: unused, schemas: unused, executionMode: unused, register: unused, dispose: unused }),
    (e) => e instanceof Inexpressible && /no batch driver/.test(e.message),
  )
})

test("a pre-execute decision reaches upstream's waterfall as the scenario wrote it", async () => {
  // {kind: 'deny'} without a reason: dsh-tools itself decides (it runs the body; GUARD-1).
  const trace = await runScenario({
    tools: [{ name: 't', parameters: { type: 'object' }, output: { schema: {}, render: 'json' }, execute: [{ return: 'ran' }] }],
    preExecute: [{ id: 'policy', steps: [{ return: { kind: 'deny' } }] }],
    actions: [{ call: { callId: 'c0', name: 't', arguments: {} } }],
  })
  assert.equal(trace.actions[0].result.isError, false)
  assert.ok(trace.events.some((e) => e.stage === 'body' && e.at === 'enter'))
})

test("listeners and guards are registered again and disposed through upstream's own disposers", async () => {
  // PIPE-6: the second registration of a listener is its own hook (Cordis' ctx.on), the
  // guard's its own entry (ctx.tools.guard); each disposer removes exactly it, a spent one nothing.
  const call = (callId) => ({ call: { callId, name: 't', arguments: {} } })
  const trace = await runScenario({
    tools: [{ name: 't', parameters: { type: 'object' }, output: { schema: {}, render: 'json' }, execute: [{ return: 'ran' }] }],
    preExecute: [{ id: 'policy', steps: [{ observe: 'execution' }, { delegate: true }] }],
    guards: [{ id: 'owner', registered: false, steps: [{ observe: 'execution' }, { return: null }] }],
    actions: [
      { register: 'policy', of: 'preExecute' },
      { register: 'owner', of: 'guards' },
      call('c0'),
      { dispose: 'policy', of: 'preExecute' },
      { dispose: 'policy', of: 'preExecute', again: true },
      { dispose: 'owner', of: 'guards' },
      call('c1'),
    ],
  })
  const entered = (callId, stage) => trace.events.filter((e) => e.call === callId && e.stage === stage && e.at === 'enter').length
  assert.deepEqual([entered('c0', 'pre-execute'), entered('c0', 'guard')], [2, 1])
  assert.deepEqual([entered('c1', 'pre-execute'), entered('c1', 'guard')], [1, 0])
  assert.deepEqual(trace.actions.slice(0, 2), [{ ok: true }, { ok: true }])
})
