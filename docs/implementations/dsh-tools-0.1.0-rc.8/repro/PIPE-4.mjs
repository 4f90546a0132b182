// PIPE-4 on @deepseek-ai/dsh-tools: a tool registered with ctx.tools.register(definition)
// and a JSON Schema `parameters` runs its body on arguments that schema refuses; only
// defineTool() definitions are validated (INVALID_ARGS). Documented: "Raw-registered tools
// own input validation but still declare and receive registry-enforced output."
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
const ran = []
ctx.tools.register(tool('read_file', async (args) => { ran.push(args); return 'read' }, {
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
}))
const missing = await ctx.tools.execute({ callId: 'c1', name: 'read_file', arguments: {}, signal: signal() })
const wrongType = await ctx.tools.execute({ callId: 'c2', name: 'read_file', arguments: { path: 1 }, signal: signal() })

verdict(!missing.isError && !wrongType.isError && ran.length === 2,
  `{} -> isError=${missing.isError}; {path: 1} -> isError=${wrongType.isError}; the body ran with ${JSON.stringify(ran)}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
