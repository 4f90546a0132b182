// CONC-1 on @deepseek-ai/dsh-tools: executionMode asks a raw-registered tool's
// isConcurrencySafe about any arguments, so a call whose arguments violate the tool's
// `parameters` is `parallel` when the classifier says true. Raw registration is the
// documented unvalidated path ("Raw-registered tools own input validation"); the
// classifier's "invalid ... arguments are exclusive" is stated for `defineTool` arguments.
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
ctx.tools.register(tool('read_file', async () => 'read', {
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
  isConcurrencySafe: () => true,
}))
const mode = (args) => ctx.tools.executionMode({ callId: 'q', name: 'read_file', arguments: args, signal: signal() }).kind
const valid = mode({ path: 'notes.md' })
const invalid = mode({ file: 42 })
const unknown = ctx.tools.executionMode({ callId: 'q', name: 'nope', arguments: {}, signal: signal() }).kind

verdict(valid === 'parallel' && invalid === 'parallel' && unknown === 'exclusive',
  `{path: notes.md} -> ${valid}; {file: 42} (violates parameters) -> ${invalid}; unknown tool -> ${unknown}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
