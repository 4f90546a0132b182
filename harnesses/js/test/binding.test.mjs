// The default Binding reaches Proxies and Maps: the JS-only shapes the language-neutral
// golden cases cannot describe. Run with `node --test harnesses/js/test/`.

import assert from 'node:assert/strict'
import { test } from 'node:test'

import { Binding, Session } from '../index.mjs'

function mutateIn(stage, execution, mutations, result) {
  const session = new Session({}, new Binding())
  const steps = mutations.map((m) => ({ mutate: m }))
  const run = stage === 'guard' ? session.guard({ id: 'g', steps }) : session.finalizer({ name: 't', finalizeContent: steps })
  if (stage === 'guard') run(execution)
  else run(execution, result)
  return session.events.filter((e) => 'mutate' in e).map((e) => e.raised)
}

test('a forwarding Proxy is read and written through its traps', () => {
  const target = { callId: 'c1', name: 't', arguments: { x: 1 } }
  const seen = []
  const proxy = new Proxy(target, {
    set(obj, key, value) {
      seen.push(key)
      obj[key] = value
      return true
    },
  })
  assert.deepEqual(mutateIn('guard', proxy, [{ target: 'execution', path: ['arguments'], value: { y: 2 } }]), [false])
  assert.deepEqual(seen, ['arguments'])
  assert.deepEqual(target.arguments, { y: 2 })
})

test('a refusing Proxy records a raise, never a kit error', () => {
  const proxy = new Proxy(
    { callId: 'c1', arguments: { x: 1 } },
    { set: () => false, deleteProperty: () => false },
  )
  const raised = mutateIn('guard', proxy, [
    { target: 'execution', path: ['arguments'], value: {} },
    { target: 'execution', path: ['arguments'], op: 'delete' },
  ])
  assert.deepEqual(raised, [true, true])
})

test('Maps are read and written by key, nested arrays spliced', () => {
  const result = new Map([
    ['isError', false],
    ['content', [{ type: 'text', text: 'a' }]],
  ])
  const execution = new Map([
    ['callId', 'c1'],
    ['arguments', { x: 1 }],
  ])
  const raised = mutateIn(
    'finalize',
    execution,
    [
      { target: 'result', path: ['isError'], value: true },
      { target: 'result', path: ['content'], op: 'append', value: { type: 'text', text: 'b' } },
      { target: 'result', path: ['content', 0], op: 'splice', value: [] },
      { target: 'execution', path: ['callId'], op: 'delete' },
      { target: 'execution', path: ['missing'], op: 'delete' },
    ],
    result,
  )
  assert.deepEqual(raised, [false, false, false, false, true])
  assert.equal(result.get('isError'), true)
  assert.deepEqual(result.get('content'), [{ type: 'text', text: 'b' }])
  assert.equal(execution.has('callId'), false)
})

test('every host value kind of methods.json decodes, and only the latitude is plain JSON', async () => {
  const { readFileSync } = await import('node:fs')
  const { decode } = await import('../index.mjs')
  const table = JSON.parse(readFileSync(new URL('../../../conformance/fixtures/schema/methods.json', import.meta.url), 'utf8'))
  for (const [kind, entry] of Object.entries(table.hostValues.kinds)) {
    const value = decode({ $special: kind })
    const plain = value === null || ['string', 'number', 'boolean'].includes(typeof value) || (Array.isArray(value) && Object.keys(value).length === value.length && Object.getPrototypeOf(value) === Array.prototype) || (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    // a reject kind is no plain JSON value, or one JSON cannot carry (a NaN inside becomes null)
    const lossless = plain && !(Array.isArray(value) && value.some((v) => typeof v === 'number' && !Number.isFinite(v)))
    assert.equal(lossless, false, kind)
    if (entry.verdict === 'may-accept') assert.ok(['"a"', '1'].includes(JSON.stringify(value)), kind)
  }
})
