// The harnesses' one action runner and its toolkit (runner.mjs, the twin of
// conformance/adapters/runner.py). Run with `node --test harnesses/js/test/`.

import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

import { actionDeadline, describeError, Runaway, RUNAWAY_ENTRIES, runActions, Session, wellFormed } from '../index.mjs'
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

// A next() that does not move on (conformance/interpreter/session.py's Runaway, its twin): the
// wrapper is entered again and again for one call; the entry past the bound throws instead.
function reentering(session, { swallow = false } = {}) {
  const wrapper = session.wrapper({ id: 'w', steps: [{ delegate: true }] })
  const dispatch = { callId: 'c0', name: 't', agent: 'main', hasParent: false, arguments: {} }
  const next = async () => {
    await new Promise((resolve) => setImmediate(resolve)) // a macrotask a hop: no microtask spin
    try {
      return await wrapper(dispatch, next)
    } catch (e) {
      if (swallow) return { isError: true, content: [] } // a registry that normalizes every throw
      throw e
    }
  }
  return wrapper(dispatch, next)
}

test('a runaway re-entry is stopped at the bound and answered as such', { timeout: 10000 }, async () => {
  const session = new Session({})
  const answers = await runActions({ actions: [call('c0')] }, { call: () => reentering(session) })
  assert.equal(answers.length, 1)
  assert.match(answers[0].raised, /^runaway: wrapper 'w' was entered 101 times for call 'c0'/)
  const enters = session.events.filter((e) => e.at === 'enter')
  assert.equal(enters.length, RUNAWAY_ENTRIES) // each entry before the bound recorded; not the next
  assert.ok(enters.every((e) => e.stage === 'wrapper' && e.id === 'w' && e.call === 'c0'))
})

test('a registry that swallows the Runaway still ends, its entries recorded', { timeout: 10000 }, async () => {
  const session = new Session({})
  const answers = await runActions({ actions: [call('c0')] }, { call: () => reentering(session, { swallow: true }) })
  assert.equal(answers.length, 1)
  assert.equal(session.events.filter((e) => e.at === 'enter').length, RUNAWAY_ENTRIES)
  assert.ok(new Runaway('guard', 'g', null, 101).message.includes('without a call'))
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
