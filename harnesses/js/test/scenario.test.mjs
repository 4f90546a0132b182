// What the harnesses read off a scenario (scenario.mjs), the wire texts (wire.mjs) and the
// answer forms of runner.mjs they share. Run with `node --test harnesses/js/test/`.

import assert from 'node:assert/strict'
import { test } from 'node:test'

// index.mjs must not guard stdout on import (only @toolreg/interpreter/stdio does)
const stdoutWrite = process.stdout.write
const kit = await import('../index.mjs')
const { batchResults, callsOf, errorResult, Inexpressible, looksOn, scriptsOf, settle, stepKinds, successResult } = kit
const { textOf, unexpressed, wireText, writesAsCaller } = kit

test('importing the package leaves stdout alone; stdio re-exports the one Inexpressible', async () => {
  assert.equal(process.stdout.write, stdoutWrite)
  const stdio = await import('../stdio.mjs')
  assert.notEqual(process.stdout.write, stdoutWrite) // stdio does guard it
  process.stdout.write = stdoutWrite
  assert.equal(stdio.Inexpressible, Inexpressible)
})

const call = (callId, extra = {}) => ({ callId, name: 't', arguments: {}, ...extra })

test('callsOf: every call of the actions in order, a batch call by call', () => {
  const scenario = { actions: [{ call: call('a') }, { schemas: {} }, { batch: [call('b'), call('c')] }, { register: 'k' }] }
  assert.deepEqual(callsOf(scenario).map((c) => c.callId), ['a', 'b', 'c'])
  assert.deepEqual(callsOf({}), [])
})

test("scriptsOf: listeners', tools' and the approval's scripts, byCall too", () => {
  const scenario = {
    tools: [{ name: 't', execute: [{ return: 1 }], finalizeContent: [{ return: 2 }], description: 'd' }],
    guards: [{ id: 'g', steps: [{ return: 3 }] }],
    observers: [{ id: 'o', steps: [{ observe: 'result' }] }],
    approval: { steps: [{ return: 'rejected' }], byCall: { c1: [{ concludeTurn: true }] } },
  }
  const scripts = scriptsOf(scenario)
  assert.equal(scripts.length, 6)
  for (const value of [1, 2, 3, 'rejected']) assert.ok(scripts.some((s) => s.some((step) => step.return === value)), value)
  assert.deepEqual([...stepKinds(scenario)].sort(), ['concludeTurn', 'observe', 'return'])
})

test('looksOn: only observe steps', () => {
  assert.equal(looksOn({ steps: [{ observe: 'call' }, { observe: 'result' }] }), true)
  assert.equal(looksOn({}), true)
  assert.equal(looksOn({ steps: [{ observe: 'call' }, { return: null }] }), false)
  assert.equal(looksOn({ steps: [{ observe: 'call', keep: 'x' }] }), false)
})

test('writesAsCaller: a call or batch call with afterInvoke or afterResult writes', () => {
  assert.equal(writesAsCaller({ actions: [{ call: call('a', { afterInvoke: [] }) }] }), false)
  assert.equal(writesAsCaller({ actions: [{ batch: [call('a'), call('b', { afterResult: [{ mutate: {} }] })] }] }), true)
  assert.equal(writesAsCaller({ actions: [{ call: call('a', { afterInvoke: [{ mutate: {} }] }) }] }), true)
})

test('unexpressed: the first scripted stage whose capability is missing, from the stage table', () => {
  const missing = { guards: 'no guards', finalizer: 'no finalizer', classifier: 'no classifier', 'code-mode': 'no code' }
  assert.equal(unexpressed({ guards: [], tools: [{ name: 't' }] }, missing), undefined) // an empty list is off
  assert.equal(unexpressed({ preExecute: [{ id: 'p', steps: [] }] }, missing), undefined) // not missing
  assert.equal(unexpressed({ guards: [{ id: 'g', steps: [] }] }, missing), 'guards: no guards')
  assert.equal(unexpressed({ tools: [{ name: 't', isConcurrencySafe: [] }] }, missing), 'isConcurrencySafe: no classifier')
  // stage table order: guard before finalize before code-dispatch-log before classifier
  const many = { codeDispatchLog: [{ id: 'l', steps: [] }], tools: [{ name: 't', finalizeContent: [], isConcurrencySafe: [] }] }
  assert.equal(unexpressed(many, missing), 'finalizeContent: no finalizer')
  assert.equal(unexpressed({ ...many, guards: [{ id: 'g', steps: [] }] }, missing), 'guards: no guards')
  assert.equal(unexpressed({ timeoutPolicy: false }, { 'timeout-policy': 'none' }), undefined)
  assert.equal(unexpressed({ timeoutPolicy: true }, { 'timeout-policy': 'none' }), 'timeoutPolicy: none')
  // a tool registered later needs registry-mutation
  const later = { tools: [{ name: 't', registered: false }] }
  assert.equal(unexpressed(later, missing), undefined)
  assert.equal(unexpressed(later, { 'registry-mutation': 'fixed tools' }), 'fixed tools')
})

test('wireText: the JSON text of arguments, Inexpressible naming where there is none', () => {
  assert.equal(wireText({ a: [1, 'x', null, true], b: { c: 2.5 } }), '{"a":[1,"x",null,true],"b":{"c":2.5}}')
  const refused = (value, pattern) => assert.throws(() => wireText(value), (e) => e instanceof Inexpressible && pattern.test(e.message))
  refused({ a: [1, NaN] }, /at \$\.a\[1\] have no JSON text \(NaN\)/)
  refused({ m: new Map() }, /at \$\.m have no JSON text \(object\)/)
  refused({ [Symbol('s')]: 1 }, /at \$ have no JSON text/)
  refused({ f: () => 1 }, /at \$\.f have no JSON text \(function\)/)
  const cycle = {}
  cycle.self = cycle
  refused(cycle, /nested too deeply or cyclic/)
})

test('textOf: a string as it is, anything else as JSON text', () => {
  assert.equal(textOf('plain'), 'plain')
  assert.equal(textOf({ a: [1, 'x'] }), '{"a":[1,"x"]}')
  assert.equal(textOf(null), 'null')
})

test('the result forms and a batch answer', () => {
  assert.deepEqual(successResult({ n: 1 }, 'one'), { isError: false, value: { n: 1 }, content: [{ type: 'text', text: 'one' }] })
  assert.deepEqual(errorResult('boom'), { isError: true, error: { message: 'boom' }, content: [{ type: 'text', text: 'boom' }] })
  assert.deepEqual(errorResult('gone', { code: 'UNKNOWN_TOOL' }).error, { message: 'gone', info: { code: 'UNKNOWN_TOOL' } })
  const ok = successResult(1, '1')
  assert.deepEqual(batchResults([{ result: ok }, { interrupted: 'why' }, { raised: 'E: x' }]), {
    results: [ok, { interrupted: 'why' }, { raised: 'E: x' }],
  })
})

test('settle: one event-loop turn, then the first collected ScriptError leaves the run', async () => {
  const session = { scriptErrors: [] }
  let landed = false
  setImmediate(() => {
    landed = true
  })
  await settle(session)
  assert.equal(landed, true)
  const first = new Error('first')
  session.scriptErrors.push(first, new Error('second'))
  await assert.rejects(settle(session), (e) => e === first)
})
