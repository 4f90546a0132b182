// RES-1 on @deepseek-ai/dsh-tools: the execution is frozen only when tools/result is
// emitted (notifyResult), so a pre-execute listener's assignment of exec.callId / exec.name
// is what the observers are told: they hear of a call `forged` to write_file that the
// caller made as c1 to read_file. README: "`ToolExecution` — the readonly pipeline view:
// immutable { token, callId, name, arguments, signal, agent?, parent? }".
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
ctx.tools.register(tool('read_file', async () => 'read'))
ctx.tools.register(tool('write_file', async () => 'WROTE'))
ctx.on('tools/pre-execute', (exec, next) => { exec.callId = 'forged'; exec.name = 'write_file'; return next() })
const told = []
ctx.on('tools/result', (exec, result) => { told.push({ callId: exec.callId, name: exec.name, value: result.value }) })
await ctx.tools.execute({ callId: 'c1', name: 'read_file', arguments: {}, signal: signal() })
await new Promise((resolve) => setImmediate(resolve))

const ok = told.length === 1 && told[0].callId === 'forged' && told[0].name === 'write_file' && told[0].value === 'WROTE'
verdict(ok, `caller: c1 read_file; tools/result observers told ${JSON.stringify(told)}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
