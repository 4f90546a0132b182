// Session.callerWrites (caller_writes of session.py): the caller's afterInvoke/afterResult
// writes land on the objects the harness routed, and a write whose object was never routed
// (no trackCaller / caller for its call) is recorded delivered: false -- no attempt, no refusal.
// tests/kit/test_doctor.py pins the same for the Python twin.

import assert from 'node:assert/strict'
import { test } from 'node:test'

import { Binding, Session } from '../index.mjs'

const WRITES = [
  { target: 'caller', path: ['name'], value: 'renamed' },
  { target: 'caller-arguments', path: ['x'], value: 2 },
]

test('callerWrites writes the routed objects and marks the unrouted ones undelivered', () => {
  const session = new Session({}, new Binding())
  const routed = { callId: 'c1', name: 't', afterResult: WRITES }
  const { arguments: args } = session.caller(routed)
  const input = session.trackCaller('c1', { callId: 'c1', name: 't', arguments: args })
  session.callerWrites(routed, 'afterResult')
  assert.equal(input.name, 'renamed')
  assert.equal(args.x, 2)
  session.callerWrites({ callId: 'c2', name: 't', afterInvoke: WRITES }, 'afterInvoke')
  const who = (id, call) => ({ stage: 'caller', id, call })
  assert.deepEqual(session.events, [
    { ...who('after-result', 'c1'), mutate: "caller['name']", raised: false },
    { ...who('after-result', 'c1'), mutate: "caller-arguments['x']", raised: false },
    { ...who('after-invoke', 'c2'), mutate: "caller['name']", raised: false, delivered: false },
    { ...who('after-invoke', 'c2'), mutate: "caller-arguments['x']", raised: false, delivered: false },
  ])
})
