// RES-3 on @deepseek-ai/dsh-tools: a guard that returns a non-string (here `true`) does
// deny the call, but the registry publishes the returned value itself as error.message, so
// the failure's message is the boolean true (ToolFailure.message is typed `string`; the
// guard broke its own type, `(execution) => string | undefined`).
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
ctx.tools.register(tool('rm', async () => { ran = true; return 'removed' }))
ctx.tools.guard(() => true)
const r = await ctx.tools.execute({ callId: 'c1', name: 'rm', arguments: {}, signal: signal() })

verdict(r.isError && !ran && r.error.message === true,
  `guard returned true -> isError=${r.isError}, body ran=${ran}, error.message=${JSON.stringify(r.error.message)} (${typeof r.error.message}), content ${JSON.stringify(r.content)}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
