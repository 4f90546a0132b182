// The stdio harness protocol (docs/protocol.md, v1), once for every JavaScript harness.
//
//   // harnesses/<yours>/harness.mjs
//   import { serve } from '@toolreg/interpreter/stdio'
//   await serve(() => import('./binding.mjs'), { cannotExpress: 'the SDK cannot express this' })
//
// One long-lived process: one JSON request per line on stdin, exactly one JSON answer
// per line on stdout, in order. Importing this module guards stdout at once: the real
// writer is kept for protocol lines and every other write -- an implementation's logger,
// console.log, a stray process.stdout.write -- goes to stderr, which the kit captures.
// Import it before anything that may print (the binding is loaded by `serve`, after).
//
// The binding module exports IMPLEMENTATION ({name, version, language}), CAPABILITIES
// (array), MISSING ({capability: why}), optionally CLOSED_FORMS (array), and
// runScenario(scenario) -> trace. It throws ScriptError for a scenario the interpreter
// cannot interpret (answered `errored`) and Inexpressible for one the implementation
// cannot express (answered `skipped`); anything else is a harness failure (`errored`).

import { createInterface } from 'node:readline'

import { ScriptError } from './interpreter.mjs'
import { Inexpressible } from './scenario.mjs'

export { Inexpressible } // where harnesses have imported it from; it lives in scenario.mjs

const writeProtocol = process.stdout.write.bind(process.stdout)
process.stdout.write = process.stderr.write.bind(process.stderr)

export const PROTOCOL_VERSION = 1

// An implementation's late rejection or throw (e.g. work still running after its
// action's deadline) is reported on stderr; it must not take the harness down.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(`harness: unhandled rejection: ${reason?.stack ?? reason}\n`)
})
process.on('uncaughtException', (error) => {
  process.stderr.write(`harness: uncaught exception: ${error?.stack ?? error}\n`)
})

/** Strict JSON: a non-finite number in an answer is a harness bug, never silently null. */
function strictNumbers(key, value) {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`non-finite number at ${JSON.stringify(key)}`)
  return value
}

function send(message) {
  let line
  try {
    line = JSON.stringify(message, strictNumbers)
  } catch (e) {
    line = JSON.stringify({ type: 'errored', seq: message.seq ?? null, context: `the answer is not strict JSON: ${e.message}` })
  }
  writeProtocol(line + '\n')
}

function context(e) {
  const where = typeof e?.stack === 'string' ? (e.stack.split('\n')[1] ?? '').trim() : ''
  const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e)
  return where ? `${what} (${where})` : what
}

async function handle(binding, request, cannotExpress) {
  switch (request.type) {
    case 'start':
      return {
        type: 'started',
        protocol: PROTOCOL_VERSION,
        implementation: binding.IMPLEMENTATION,
        capabilities: binding.CAPABILITIES,
        ...(Object.keys(binding.MISSING ?? {}).length > 0 ? { missing: binding.MISSING } : {}),
        ...(binding.CLOSED_FORMS ? { closedForms: binding.CLOSED_FORMS } : {}),
      }
    case 'run': {
      const seq = request.seq
      try {
        return { type: 'trace', seq, trace: await binding.runScenario(request.scenario) }
      } catch (e) {
        if (e instanceof Inexpressible) return { type: 'skipped', seq, reason: `${cannotExpress}: ${e.message}` }
        const kind = e instanceof ScriptError ? 'the scenario cannot be interpreted' : 'harness failure'
        return { type: 'errored', seq, context: `${kind}: ${context(e)}` }
      }
    }
    case 'stop':
      return { type: 'stopped' }
    default:
      return { type: 'errored', seq: request.seq ?? null, context: `unknown request type ${JSON.stringify(request.type)}` }
  }
}

/**
 * Load the binding (after stdout is guarded, so nothing it prints at load time reaches
 * stdout) and answer requests until `stop` or the end of stdin; then exit.
 * @param {() => Promise<object>} load
 * @param {{ cannotExpress?: string }} [options]
 */
export async function serve(load, { cannotExpress = 'the implementation cannot express this' } = {}) {
  const binding = await load()
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) {
    if (!line.trim()) continue
    let request
    try {
      request = JSON.parse(line)
      if (request === null || typeof request !== 'object' || Array.isArray(request)) {
        throw new TypeError('a request must be a JSON object')
      }
    } catch (e) {
      send({ type: 'errored', seq: null, context: `unreadable request: ${e.message}` })
      continue
    }
    send(await handle(binding, request, cannotExpress))
    if (request.type === 'stop') process.exit(0)
  }
  process.exit(0)
}
