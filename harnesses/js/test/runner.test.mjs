// The harnesses' one action runner and its toolkit (runner.mjs, the twin of
// conformance/adapters/runner.py). Run with `node --test harnesses/js/test/`.

import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

import { actionDeadline, describeError, runActions, wellFormed } from '../index.mjs'
import { Inexpressible } from '../stdio.mjs'

const SHAPES = JSON.parse(readFileSync(new URL('./decision-shapes.json', import.meta.url), 'utf8'))
const call = (callId) => ({ call: { callId, name: 't', arguments: {} } })

test('the well-formed decisions of the shared table are decisions', () => {
  for (const { stage, decision } of SHAPES.wellFormed) assert.equal(wellFormed(decision, stage), true, JSON.stringify(decision))
})

test('the malformed decisions of the shared table are none', () => {
  for (const { stage, decision } of SHAPES.malformed) assert.equal(wellFormed(decision, stage), false, JSON.stringify(decision))
})

test('a near-miss kind is no decision', () => {
  for (const kind of ['Allow', ' deny', 'ask\n', 'allow\u200b', 'аllow', 'approve', 'accept', '']) {
    assert.equal(wellFormed({ kind }, 'pre-execute'), false, kind)
    assert.equal(wellFormed({ kind, reason: 'r' }, 'pre-execute'), false, kind)
  }
})

test("a hanging call is answered with the kit's deadline message", async () => {
  const answers = await runActions({ actions: [call('c0')] }, { call: () => new Promise(() => {}) }, { deadlineMs: 50 })
  assert.deepEqual(answers, [{ raised: actionDeadline(0.05) }])
  assert.equal(actionDeadline(5), 'deadline of 5 s exceeded') // conformance.vocab.ACTION_DEADLINE_MESSAGE
})

test('a throw is the answer; an Inexpressible leaves the run', async () => {
  const boom = { call: async () => Promise.reject(new TypeError('boom')) }
  assert.deepEqual(await runActions({ actions: [call('c0')] }, boom), [{ raised: 'TypeError: boom' }])
  assert.equal(describeError({ message: 'm' }), 'Object: m') // a non-Error with a message: its constructor's name
  await assert.rejects(runActions({ actions: [{ executionMode: { name: 't' } }] }, {}), (e) => e instanceof Inexpressible)
})

test('a schemas write is made into what was listed and read again', async () => {
  const entries = [{ name: 't', parameters: { type: 'object' } }]
  const action = { schemas: {}, mutate: { path: [0, 'parameters', 'type'], value: 'x' } }
  const [answer] = await runActions({ actions: [action] }, { schemas: () => entries })
  assert.deepEqual(answer.schemas[0].parameters, { type: 'object' })
  assert.deepEqual(answer.after[0].parameters, { type: 'x' })
})
