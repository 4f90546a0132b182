// DEF-2 on a wire form: the kit's one projection of a provider request's tool entry (the
// twin of conformance/seam/wire.py; SPEC DEF-2 "On a wire form"). Provider field names
// become the spec's (renames), the envelope (type: "function", a boolean strict) is
// dropped, every other key is kept so a leak shows, and values are the framework's own
// objects, never copies (a schemas action's write goes into what the framework sends next).
// And the two texts of a call on the wire: the arguments a model sends (wireText) and the
// text a model is shown for a value (textOf).

import { dumps, jsonable } from './interpreter.mjs'
import { Inexpressible } from './scenario.mjs'

const ENVELOPE = {
  type: (value) => value === 'function',
  strict: (value) => typeof value === 'boolean',
}

export function modelEntry(entry, renames = {}) {
  const out = {}
  for (const [key, value] of Object.entries(entry)) {
    const test = ENVELOPE[key]
    if (test !== undefined && test(value)) continue
    if (value === undefined) continue // an absent field of a JS object literal
    out[renames[key] ?? key] = value
  }
  return out
}

/**
 * The JSON text a model sends as a call's arguments (a provider's tool call carries its
 * input as a string). Arguments with no JSON text -- a non-finite number, a non-plain
 * object (a Map, a class instance, a symbol key), a cycle, nesting too deep -- cannot be
 * sent by a model: Inexpressible, naming the path.
 */
export function wireText(value) {
  const check = (v, p) => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new Inexpressible(`the arguments at ${p} have no JSON text (${v})`)
      return
    }
    if (Array.isArray(v)) return v.forEach((x, i) => check(x, `${p}[${i}]`))
    if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype && Object.getOwnPropertySymbols(v).length === 0) {
      return Object.entries(v).forEach(([k, x]) => check(x, `${p}.${k}`))
    }
    throw new Inexpressible(`the arguments at ${p} have no JSON text (${typeof v})`)
  }
  try {
    check(value, '$')
  } catch (e) {
    if (e instanceof RangeError) throw new Inexpressible('the arguments are nested too deeply or cyclic: no JSON text')
    throw e
  }
  return JSON.stringify(value)
}

/** The text a model is shown for a tool's value: a string as it is, anything else as JSON. */
export function textOf(value) {
  return typeof value === 'string' ? value : dumps(jsonable(value))
}
