// The golden interpreter cases (conformance/fixtures/interpreter/*.json) against
// the JavaScript interpreter: the same cases tests/test_interpreter_golden.py
// runs against the Python one. Run with `node --test harnesses/js/test/`.
//
// A case describes the objects a callable receives as JSON; this file builds
// them the way the default Binding reads them (camelCase fields, a parent
// field, an AbortSignal) and compares what the Session records, exactly.

import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'

import { Binding, decode, jsonable, runProgram, ScriptError, Session, STEP_TABLE } from '../index.mjs'

const CASES_DIR = new URL('../../../conformance/fixtures/interpreter/', import.meta.url)

function loadCases() {
  const out = []
  for (const file of readdirSync(CASES_DIR).filter((f) => f.endsWith('.json')).sort()) {
    const document = JSON.parse(readFileSync(new URL(file, CASES_DIR), 'utf8'))
    for (const c of document.cases) out.push({ id: `${file.replace(/\.json$/, '')}:${c.name}`, case: c })
  }
  return out
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !(value instanceof AbortSignal)) {
    for (const item of Object.values(value)) deepFreeze(item)
    Object.freeze(value)
  }
  return value
}

/** A Map that refuses every write: the frozen form of a mapping-shaped object. */
class FrozenMap extends Map {
  constructor(entries) {
    super(entries)
    this.sealed = true
  }
  set(key, value) {
    if (this.sealed) throw new TypeError(`read-only map: ${String(key)}`)
    return super.set(key, value)
  }
  delete(key) {
    throw new TypeError(`read-only map: ${String(key)}`)
  }
  clear() {
    throw new TypeError('read-only map')
  }
}

function shaped(spec, obj) {
  if (spec.shape !== 'mapping') return spec.frozen ? deepFreeze(obj) : obj
  const entries = Object.entries(obj)
  if (!spec.frozen) return new Map(entries)
  for (const [, value] of entries) deepFreeze(value)
  return new FrozenMap(entries)
}

class Runner {
  constructor(c) {
    this.case = c
    this.session = new Session({}, new Binding(), { waitMs: c.waitMs ?? 200 })
    this.hooks = []
    this.contexts = []
    this.session.registerHook = (key) => this.hooks.push(['register', key])
    this.session.disposeHook = (key) => this.hooks.push(['dispose', key])
    this.nested = []
    this.session.nestedCall = async (ctx, callId, name, args) => {
      // A `forward` step's nested call: recorded, answered by the case's `nested`.
      const answer = (c.nested ?? [])[this.nested.length]
      this.nested.push([callId, name, jsonable(args)])
      if ('throw' in answer) throw new Error(answer.throw)
      return this.result(answer.result)
    }
    for (const call of c.callers ?? []) {
      const { arguments: args } = this.session.caller(call)
      this.session.trackCaller(call.callId, { callId: call.callId, name: call.name, arguments: args })
    }
  }

  signal(spec) {
    const b = this.session.binding
    const kind = spec.signal ?? 'caller'
    const controller = this.session.controllers.get(spec.callId ?? '')
    if (kind === 'caller' && controller !== undefined) return b.controllerSignal(controller)
    if (kind === 'none') return undefined
    const fresh = b.newController()
    if (kind === 'aborted') b.abort(fresh)
    return b.controllerSignal(fresh)
  }

  execution(spec) {
    if (spec === undefined) return undefined
    const obj = {}
    for (const [key, value] of Object.entries(spec)) {
      if (!['frozen', 'shape', 'signal', 'hasParent', 'arguments'].includes(key)) obj[key] = value
    }
    if ('arguments' in spec) obj.arguments = decode(spec.arguments)
    if ('hasParent' in spec) obj.parent = spec.hasParent ? {} : undefined
    const signal = this.signal(spec)
    if (signal !== undefined) obj.signal = signal
    if (spec.shape === 'mapping') return shaped(spec, obj)
    const context = { deferred: [], concluded: 0, forwarded: [] }
    Object.defineProperties(obj, {
      deferContext: { value: (message) => context.deferred.push(message) },
      concludeTurn: { value: () => (context.concluded += 1) },
      forward: { value: (result) => context.forwarded.push(jsonable(result)) },
      context: { value: context },
    })
    return spec.frozen ? deepFreeze(obj) : obj
  }

  result(spec) {
    if (spec === undefined) return undefined
    const obj = {}
    for (const [key, value] of Object.entries(spec)) if (key !== 'frozen' && key !== 'shape') obj[key] = decode(value)
    return shaped(spec, obj)
  }

  next(answers) {
    const queue = [...(answers ?? [])]
    return async () => {
      const answer = queue.shift()
      if ('throw' in answer) throw new Error(answer.throw)
      if ('result' in answer) return this.result(answer.result)
      return decode(answer.return)
    }
  }

  /** Call the run's callable: it runs until it first waits (a synchronous stage's settles). */
  start(run) {
    const s = this.session
    const { stage, id, steps } = run
    const execution = this.execution(run.execution)
    const result = this.result(run.result)
    const next = this.next(run.next)
    const listener = { id, steps }
    switch (stage) {
      case 'body':
        if (execution !== undefined) this.contexts.push(execution)
        return s.toolBody({ name: id, execute: steps })(undefined, execution)
      case 'pre-execute':
        return s.preListener(listener)(execution, next)
      case 'wrapper':
        return s.wrapper(listener)(execution, next)
      case 'post-execute':
        return s.postListener(listener)(execution, result, next)
      case 'result':
        return s.observer(listener)(execution, result)
      case 'code-dispatch-log':
        return s.codeDispatchLog(listener)(execution, next)
      case 'approval':
        return s.approvalRequest({ steps, ...(run.byCall ? { byCall: run.byCall } : {}) })(execution)
      case 'classifier':
        return s.classifier({ name: id, isConcurrencySafe: steps })(decode(run.execution?.arguments))
      case 'finalize':
        return s.finalizer({ name: id, finalizeContent: steps })(execution, result)
      case 'guard':
        return s.guard(listener)(execution)
      default:
        throw new Error(`unknown stage ${stage}`)
    }
  }

  async runAll() {
    const started = this.case.runs.map((run) => {
      try {
        return Promise.resolve(this.start(run)).then(outcome, failure)
      } catch (e) {
        return Promise.resolve(failure(e))
      }
    })
    return Promise.all(started)
  }
}

function outcome(value) {
  return { returns: jsonable(value) }
}

function failure(e) {
  if (e instanceof ScriptError) return { raises: 'ScriptError' }
  if (!(e instanceof Error)) return { raises: { value: jsonable(e) } }
  return { raises: { error: jsonable(e.message), ...('code' in e ? { code: jsonable(e.code) } : {}) } }
}

async function runScriptCase(c) {
  const runner = new Runner(c)
  const outcomes = await runner.runAll()
  const out = { events: runner.session.events, outcomes }
  if (runner.hooks.length) out.hooks = runner.hooks
  if (runner.contexts.length) {
    out.context = {
      deferred: runner.contexts.flatMap((ctx) => ctx.context.deferred.map((m) => jsonable(m))),
      concluded: runner.contexts.reduce((n, ctx) => n + ctx.context.concluded, 0),
    }
    const forwarded = runner.contexts.flatMap((ctx) => ctx.context.forwarded)
    if (forwarded.length) out.context.forwarded = forwarded
  }
  if (runner.nested.length) out.nestedCalls = runner.nested
  if (c.callers?.length) {
    const b = runner.session.binding
    out.aborted = Object.fromEntries(
      [...runner.session.controllers].map(([callId, controller]) => [callId, b.aborted(b.controllerSignal(controller))]),
    )
  }
  return out
}

async function runProgramCase(c) {
  const code = typeof c.program === 'string' ? c.program : JSON.stringify(c.program)
  const answers = [...(c.answers ?? [])]
  const calls = []
  const logs = []
  const sdk = {
    call(name, args) {
      calls.push([name, args])
      const answer = answers.shift()
      if ('error' in answer) throw new Error(answer.error)
      return answer.ok
    },
    log(line) {
      logs.push(line)
    },
  }
  const ran = await runProgram(code, sdk)
  return { ...('failed' in ran ? { fails: ran.failed } : { returns: ran.value }), calls, logs }
}

/** The same comparison as tests/test_interpreter_golden.py's compare(). */
export function compare(c, got) {
  const expect = { ...c.expect }
  got = { ...got }
  if ('fails' in expect && c.failsWith) {
    assert.ok(String(got.fails ?? '').startsWith(expect.fails), `fails: ${got.fails}`)
    delete expect.fails
    delete got.fails
  }
  if (c.interleaving === 'any') {
    const key = (e) => JSON.stringify([e.stage, e.id ?? e.tool ?? 'approval'])
    assert.equal(got.events.length, expect.events.length)
    for (const k of new Set(expect.events.map(key))) {
      assert.deepEqual(
        got.events.filter((e) => key(e) === k),
        expect.events.filter((e) => key(e) === k),
        k,
      )
    }
    delete expect.events
    delete got.events
  }
  assert.deepEqual(JSON.parse(JSON.stringify(got)), expect)
}

const CASES = loadCases()

for (const { id, case: c } of CASES) {
  test(id, async () => {
    compare(c, 'program' in c ? await runProgramCase(c) : await runScriptCase(c))
  })
}

test('every step kind of the table appears in a case', () => {
  const seen = new Set(CASES.flatMap(({ case: c }) => (c.runs ?? []).flatMap((r) => r.steps.map((s) => Object.keys(s)[0]))))
  for (const kind of Object.keys(STEP_TABLE.steps)) assert.ok(seen.has(kind), kind)
})

test('a wrong expectation fails', async () => {
  const { case: c } = CASES.find(({ case: c }) => c.expect.events?.length)
  const expect = structuredClone(c.expect)
  expect.events[0].stage = 'perturbed'
  const got = await runScriptCase(c)
  assert.throws(() => compare({ ...c, expect }, got), assert.AssertionError)
})
