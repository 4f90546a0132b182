// EXEC-1 on @deepseek-ai/dsh-tools, two behaviours:
// (1) a tool body can assign its own `exec.signal` (`readonly` is a TypeScript annotation)
//     and then misses the caller's abort; the write stays in its own view: post-execute
//     sees the abort and the call ends ABORTED;
// (2) an outer tools/execute wrapper's next() gives it exactly what the inner one returned
//     -- 42, or an authored success that is not the tool's render: the registry normalizes
//     once, after the waterfall; the types say "`next()` returns a normalized result".
// Exit 0: both reproduce; 1: one no longer does.
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

const own = await registry()
const caller = new AbortController()
let bodySawAbort, postSawAbort
own.tools.register(tool('bash', async (_args, exec) => {
  exec.signal = new AbortController().signal
  caller.abort('stop')
  bodySawAbort = exec.signal.aborted
  return 'done'
}))
own.on('tools/post-execute', (exec, _result, next) => { postSawAbort = exec.signal.aborted; return next() })
const aborted = await own.tools.execute({ callId: 'c1', name: 'bash', arguments: {}, signal: caller.signal })

const seen = []
for (const authored of [42, { isError: false, value: 'cached', content: [{ type: 'text', text: 'not the render' }] }]) {
  const ctx = await registry()
  ctx.tools.register(tool('read_file', async () => 'read'))
  ctx.on('tools/execute', async (_exec, next) => { const inner = await next(); seen.push(inner === authored); return inner })
  ctx.on('tools/execute', async () => authored)
  const r = await ctx.tools.execute({ callId: 'c2', name: 'read_file', arguments: {}, signal: signal() })
  seen.push(r.isError ? 'error' : r.content[0].text)
}

verdict(bodySawAbort === false && postSawAbort === true && aborted.error?.info?.code === 'ABORTED' &&
  JSON.stringify(seen) === JSON.stringify([true, 'error', true, 'cached']),
  `(1) body's own signal aborted=${bodySawAbort}, post-execute's ${postSawAbort}, code ${aborted.error?.info?.code}; (2) outer next() === inner's return, final: ${JSON.stringify(seen)}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
