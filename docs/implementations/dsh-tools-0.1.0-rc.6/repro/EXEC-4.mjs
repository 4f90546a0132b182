// EXEC-4 on @deepseek-ai/dsh-tools: a tools/execute wrapper that returns a mapping which
// almost is a result -- `isError: 0`, `isError: null`, or no `isError` at all, with a value
// -- gets it published as a success: the registry reads the discriminant by truthiness
// (`if (result.isError)` in normalizeDispatchResult) and normalizes the rest as a
// wrapper-authored success (the value validated and re-rendered through the tool's
// output declaration). The types give a success `readonly isError: false;`.
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
  output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: `rendered ${value}` }] },
})
const signal = () => new AbortController().signal

const seen = []
const content = [{ type: 'text', text: 'authored' }]
for (const almost of [{ isError: 0, value: 'v', content }, { isError: null, value: 'v', content }, { value: 'v', content }]) {
  const ctx = await registry()
  ctx.tools.register(tool('read_file', async () => 'read'))
  ctx.on('tools/execute', async () => almost)
  const r = await ctx.tools.execute({ callId: 'c1', name: 'read_file', arguments: {}, signal: signal() })
  seen.push({ returned: 'isError' in almost ? almost.isError : 'absent', isError: r.isError, value: r.value, content: r.content?.[0]?.text })
}

verdict(seen.every((s) => s.isError === false && s.value === 'v' && s.content === 'rendered v'),
  `a wrapper's almost-result, published: ${JSON.stringify(seen)}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
