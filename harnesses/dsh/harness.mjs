#!/usr/bin/env node
// toolreg-conformance stdio harness for @deepseek-ai/dsh-tools (harness protocol v1).
//
//   npm ci --prefix harnesses/dsh
//   toolreg-conformance run --adapter "stdio:node harnesses/dsh/harness.mjs"
//   toolreg-conformance run --adapter "stdio:node harnesses/dsh/harness.mjs --upstream 0.1.0-rc.6"
//
// One long-lived process. One JSON request per line on stdin, exactly one JSON
// answer per line on stdout, in order (docs/protocol.md). stdout carries
// protocol lines only: everything else anyone prints -- upstream's logger,
// console.log, a stray process.stdout.write -- is sent to stderr, which the
// kit captures.

// Keep the real stdout writer for protocol lines; route every other write to stderr.
const writeProtocol = process.stdout.write.bind(process.stdout)
process.stdout.write = process.stderr.write.bind(process.stderr)

const PROTOCOL_VERSION = 1

// An implementation's late rejection or throw (e.g. work still running after its
// action's deadline) is reported on stderr; it must not take the harness down.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(`harness: unhandled rejection: ${reason?.stack ?? reason}\n`)
})
process.on('uncaughtException', (error) => {
  process.stderr.write(`harness: uncaught exception: ${error?.stack ?? error}\n`)
})

const { createInterface } = await import('node:readline')
// The release under test (--upstream, see upstream.mjs): a bad choice ends the harness
// before the handshake, with the reason on stderr.
let upstream
try {
  upstream = await import('./upstream.mjs')
} catch (e) {
  process.stderr.write(`harness: ${e.message}\n`)
  process.exit(2)
}
if (upstream.PINNED) {
  const { register } = await import('node:module')
  register('./pin-upstream.mjs', import.meta.url, { data: upstream.HOOK_DATA })
}
// Imported after stdout is guarded, so nothing the modules print at load time reaches it.
const { CAPABILITIES, IMPLEMENTATION, MISSING, runScenario } = await import('./dsh.mjs')
const { ScriptError } = await import('@toolreg/interpreter')

function send(message) {
  let line
  try {
    line = JSON.stringify(message, strictNumbers)
  } catch (e) {
    line = JSON.stringify({ type: 'errored', seq: message.seq ?? null, context: `the answer is not strict JSON: ${e.message}` })
  }
  writeProtocol(line + '\n')
}

/** Strict JSON: a non-finite number in an answer is a harness bug, never silently null. */
function strictNumbers(key, value) {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`non-finite number at ${JSON.stringify(key)}`)
  return value
}

function context(e) {
  const where = typeof e?.stack === 'string' ? (e.stack.split('\n')[1] ?? '').trim() : ''
  const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e)
  return where ? `${what} (${where})` : what
}

async function handle(request) {
  switch (request.type) {
    case 'start':
      return {
        type: 'started',
        protocol: PROTOCOL_VERSION,
        implementation: IMPLEMENTATION,
        capabilities: CAPABILITIES,
        ...(Object.keys(MISSING).length > 0 ? { missing: MISSING } : {}),
      }
    case 'run': {
      const seq = request.seq
      try {
        return { type: 'trace', seq, trace: await runScenario(request.scenario) }
      } catch (e) {
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
  send(await handle(request))
  if (request.type === 'stop') process.exit(0)
}
process.exit(0)
