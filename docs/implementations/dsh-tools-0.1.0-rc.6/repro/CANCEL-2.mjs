// CANCEL-2 on @deepseek-ai/dsh-tools: a call already aborted on entry whose arguments are
// not lossless JSON fails on its arguments first (invalid input outranks cancellation: no
// ABORTED_BEFORE_DISPATCH, no policy, no body, one result), but the error carries no code:
// materialization throws a plain TypeError, published without error.info. (ToolFailure:
// "Canonical failure detail; internal routing information remains optional.")
// Exit 0: the behaviour reproduces; 1: it no longer does.
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
let ran = false
let policy = 0
let notified = 0
ctx.tools.register(tool('seek', async () => { ran = true; return 'sought' }))
ctx.on('tools/pre-execute', (_exec, next) => { policy++; return next() })
ctx.on('tools/result', () => { notified++ })
const aborted = new AbortController()
aborted.abort('user pressed stop')
const r = await ctx.tools.execute({ callId: 'c1', name: 'seek', arguments: { offset: NaN }, signal: aborted.signal })
const valid = await ctx.tools.execute({ callId: 'c2', name: 'seek', arguments: { offset: 1 }, signal: aborted.signal })
await new Promise((resolve) => setImmediate(resolve))

verdict(r.isError && r.error.info === undefined && !ran && policy === 0 && notified === 2 &&
  valid.error?.info?.code === 'ABORTED_BEFORE_DISPATCH',
  `aborted + {offset: NaN} -> ${JSON.stringify(r.error)}; aborted + {offset: 1} -> ${valid.error?.info?.code}; body ran=${ran}, policy ran ${policy} times`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
