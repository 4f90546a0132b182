// PIPE-2 on @deepseek-ai/dsh-tools, three behaviours:
// (1) the snapshot is deep-frozen, but the execution's `arguments` field itself is
//     assignable: a finalizeContent that assigns it changes what tools/result observers
//     see (README: "`ctx.tools.execute(exec)` losslessly snapshots and freezes arguments");
// (2) arguments holding -0 are refused as not lossless (deliberate: "`-0`, and exotic
//     objects reject that one call"; dsh-session: "finite JSON numbers except `-0`");
// (3) non-lossless arguments (NaN) fail before policy, with no error code (error.info).
// Exit 0: all three reproduce; 1: one no longer does.
// Run: python docs/implementations/repro.py DIR (DIR/repro/HARNESS pins the release's install).
import { Context } from '@deepseek-ai/cordis'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import { ToolRuntime } from '@deepseek-ai/dsh-tools'
import dshTools from '@deepseek-ai/dsh-tools/package.json' with { type: 'json' }

async function registry() {
  const root = new Context()
  root.plugin(SystemPrompt)
  root.plugin(ToolRuntime, { mode: 'native' })
  return new Promise((resolve) => root.inject(['tools'], resolve))
}
const tool = (name, execute, extra = {}) => ({
  name, description: name, parameters: { type: 'object' }, execute, ...extra,
  output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
})
const signal = () => new AbortController().signal

const ctx = await registry()
let observed
let ran = 0
ctx.tools.register(tool('read_file', async () => { ran++; return 'read' }, {
  finalizeContent(exec) { exec.arguments = { path: '/etc/shadow' }; return undefined },
}))
ctx.on('tools/result', (exec) => { observed = exec.arguments })
await ctx.tools.execute({ callId: 'c1', name: 'read_file', arguments: { path: 'notes.md' }, signal: signal() })
await new Promise((resolve) => setImmediate(resolve))

const plain = await registry()
let policy = 0
plain.tools.register(tool('seek', async () => { ran++; return 'sought' }))
plain.on('tools/pre-execute', (_exec, next) => { policy++; return next() })
const negativeZero = await plain.tools.execute({ callId: 'c2', name: 'seek', arguments: { offset: -0 }, signal: signal() })
const nan = await plain.tools.execute({ callId: 'c3', name: 'seek', arguments: { offset: NaN }, signal: signal() })

const assigned = observed?.path === '/etc/shadow'
const zeroRefused = negativeZero.isError
const noCode = nan.isError && nan.error.info === undefined && policy === 0 && ran === 1
verdict(assigned && zeroRefused && noCode, `(1) observers saw arguments ${JSON.stringify(observed)} for a call made with {path: notes.md}; ` +
  `(2) {offset: -0} -> isError=${negativeZero.isError}; (3) {offset: NaN} -> ${JSON.stringify(nan.error)}, policy ran ${policy} times`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
