// The one action runner of the JavaScript harnesses, and their small shared toolkit: the twin of
// conformance/adapters/runner.py. A harness is a Binding (how the session reads and builds the
// implementation's objects) plus a driver (what each kind of action does on it); runActions runs a
// scenario's actions in order through the driver under the one per-action deadline.
import { attemptWrite, jsonable, Runaway, ScriptError } from './interpreter.mjs'
import { Inexpressible } from './scenario.mjs'

/** The per-action deadline (conformance.adapters.runner.ACTION_DEADLINE_S). */
export const ACTION_DEADLINE_MS = 5000

/** The `raised` text of an action that hit a deadline of `seconds` (conformance.vocab.action_deadline). */
export function actionDeadline(seconds) {
  return `deadline of ${seconds} s exceeded`
}

export class DeadlineExceeded extends Error {
  constructor(what = 'action') {
    super(what)
    this.name = 'DeadlineExceeded'
  }
}

/** A timer of `ms` whose promise rejects with DeadlineExceeded(`what`); `clear()` stops it. */
export function deadline(ms, what = 'action') {
  let timer
  const promise = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(what)), ms)
  })
  return { promise, clear: () => clearTimeout(timer) }
}

/** Race `pending` against a deadline of `ms`; the loser is left to settle on its own. */
export async function withinDeadline(pending, ms = ACTION_DEADLINE_MS) {
  pending.catch(() => {}) // a late rejection after the deadline must not crash the harness
  const timer = deadline(ms)
  try {
    return await Promise.race([pending, timer.promise])
  } finally {
    timer.clear()
  }
}

/** `${type}: ${message}`, as Python's f"{type(e).__name__}: {e}" (an object with a message too). */
export function describeError(e) {
  if (e instanceof Error || (e !== null && typeof e === 'object' && 'message' in e)) {
    const name = typeof e.name === 'string' && e.name ? e.name : (e.constructor?.name ?? 'Error')
    return `${name}: ${e.message}`
  }
  return `${typeof e}: ${String(e)}`
}

/**
 * The end of a run, before its trace is taken: one turn of the event loop lets the synchronous
 * tails of the last notifications land (an implementation may notify without awaiting); a
 * ScriptError the session collected meanwhile (one the implementation swallowed as a
 * listener's failure) makes the run `errored`.
 */
export async function settle(session) {
  await new Promise((resolve) => setImmediate(resolve))
  if (session.scriptErrors.length > 0) throw session.scriptErrors[0]
}

/** A batch action's answer from its calls' answers: each call's result, or its closed form. */
export function batchResults(answers) {
  return { results: answers.map((a) => ('result' in a ? a.result : a)) }
}

/** A success as the kit's result (trace.schema.json): its value and the text the model got. */
export function successResult(value, text) {
  return { isError: false, value: jsonable(value), content: [{ type: 'text', text }] }
}

/** An error as the kit's result: its message (the text the model got) and, when known, its info. */
export function errorResult(message, info) {
  return { isError: true, error: { message, ...(info ? { info } : {}) }, content: [{ type: 'text', text: message }] }
}

// Each kind of each stage's decisions (SPEC section 2 "Decision"): [required keys, allowed keys].
const SHAPES = {
  'pre-execute': {
    allow: [[], []],
    deny: [['reason'], ['reason']],
    ask: [[], ['reason']],
  },
  'post-execute': {
    accept: [[], ['content', 'value', 'additionalContexts']],
    block: [['feedback'], ['feedback', 'additionalContexts']],
  },
}
const isText = (value) => typeof value === 'string'
/** A block's feedback: a text, or content (an array of blocks, each with a text `type`). */
const isFeedback = (value) =>
  isText(value) || (Array.isArray(value) && value.every((b) => b !== null && typeof b === 'object' && !Array.isArray(b) && isText(b.type)))
const FORMS = { reason: isText, feedback: isFeedback }

/**
 * Is `decision` a well-formed decision of `stage` ('pre-execute' or 'post-execute')? The one
 * answer of every harness, the same as conformance.adapters.runner.well_formed (which gives the
 * reasons): the kind compared exactly (a near miss is no decision), no key the kind does not
 * list, reason a text (null is none), feedback a text or content (an array of typed blocks),
 * a deny with an empty reason a deny.
 */
export function wellFormed(decision, stage) {
  if (decision === null || typeof decision !== 'object' || Array.isArray(decision)) return false
  const kinds = SHAPES[stage]
  const kind = decision.kind
  if (typeof kind !== 'string' || !Object.hasOwn(kinds, kind)) return false
  const [required, allowed] = kinds[kind]
  const keys = Object.keys(decision).filter((k) => k !== 'kind')
  if (!required.every((k) => keys.includes(k)) || !keys.every((k) => allowed.includes(k))) return false
  return keys.every((k) => !Object.hasOwn(FORMS, k) || FORMS[k](decision[k]))
}

/**
 * Run a scenario's actions in order through `driver`; one answer per action. The driver has
 * `call(call)` and `batch(calls, maxParallel)` (each resolving to the action's answer;
 * maxParallel undefined when the action sets none),
 * `schemas(scope)` (the listed entries, live if they are; scope undefined when none), `executionMode(call)`,
 * `register(key)`, `dispose(key, again)`, `registerListener(of, id)`,
 * `disposeListener(of, id, again)`, `callerWrites(call, moment)` (Session.callerWrites: the
 * caller's afterInvoke writes right after invoking `call`, its afterResult writes after the
 * answer) -- each optional -- and `unsupported(action)`, which throws
 * (Inexpressible: the scenario is skipped) for an action it has no counterpart for. A thrown
 * ScriptError or Inexpressible leaves the run; anything else thrown is the action's `raised`.
 */
export async function runActions(scenario, driver, { deadlineMs = ACTION_DEADLINE_MS } = {}) {
  const answers = []
  for (const action of scenario.actions ?? []) {
    try {
      answers.push(await answer(action, driver, deadlineMs))
    } catch (e) {
      if (e instanceof ScriptError || e instanceof Inexpressible) throw e
      if (e instanceof DeadlineExceeded) answers.push({ raised: actionDeadline(deadlineMs / 1000) })
      else if (e instanceof Runaway) answers.push({ raised: e.message }) // the interpreter stopped it
      else answers.push({ raised: describeError(e) })
    }
  }
  return answers
}

async function answer(action, driver, deadlineMs) {
  const has = (name) => typeof driver[name] === 'function'
  const missing = () => {
    if (has('unsupported')) return driver.unsupported(action)
    throw new Inexpressible(`action ${JSON.stringify(Object.keys(action))} has no counterpart`)
  }
  const of = 'of' in action
  if ('call' in action) {
    if (!has('call')) return missing()
    // invoking runs the call up to its first await; then the caller writes (afterInvoke:
    // PIPE-2's "later" counts from the call), before awaiting the result
    let pending
    try {
      pending = Promise.resolve(driver.call(action.call))
    } catch (e) {
      pending = Promise.reject(e)
    }
    pending.catch(() => {})
    if (has('callerWrites')) driver.callerWrites(action.call, 'afterInvoke')
    const out = await withinDeadline(pending, deadlineMs)
    if (has('callerWrites')) driver.callerWrites(action.call, 'afterResult')
    return out
  }
  if ('batch' in action) {
    if (!has('batch')) return missing()
    return withinDeadline(Promise.resolve().then(() => driver.batch(action.batch, action.maxParallel)), deadlineMs)
  }
  if ('schemas' in action) {
    if (!has('schemas')) return missing()
    const scope = action.schemas?.scope
    const listed = await driver.schemas(scope)
    const out = { schemas: jsonable(listed) }
    if ('mutate' in action) {
      attemptWrite(listed, action.mutate) // `after` shows whether it took
      out.after = jsonable(await driver.schemas(scope))
    }
    return out
  }
  if ('executionMode' in action) {
    if (!has('executionMode')) return missing()
    return { mode: await driver.executionMode(action.executionMode) }
  }
  if ('register' in action && of) {
    if (!has('registerListener')) return missing()
    await driver.registerListener(action.of, action.register)
    return { ok: true }
  }
  if ('dispose' in action && of) {
    if (!has('disposeListener')) return missing()
    await driver.disposeListener(action.of, action.dispose, action.again === true)
    return {}
  }
  if ('register' in action) {
    if (!has('register')) return missing()
    const { key, ...outcome } = await driver.register(action.register)
    return outcome
  }
  if ('dispose' in action) {
    if (!has('dispose')) return missing()
    await driver.dispose(action.dispose, action.again === true)
    return {}
  }
  return missing()
}
