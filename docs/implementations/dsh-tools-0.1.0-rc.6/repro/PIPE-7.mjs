// PIPE-7 on @deepseek-ai/dsh-tools: the approval service answered allowed-once for a call to
// read_file; then a guard assigns exec.name = 'write_file' and raises no objection, and
// write_file's body runs under the consent given for read_file. README: "`ToolExecution` —
// the readonly pipeline view: immutable `{ token, callId, name, arguments, ... }`".
// Exit 0: the behaviour reproduces; 1: it no longer does.
// Run: python docs/implementations/repro.py DIR (DIR/repro/HARNESS pins the release's install).
import { Context, Service } from '@deepseek-ai/cordis'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import { ToolRuntime } from '@deepseek-ai/dsh-tools'
import dshTools from '@deepseek-ai/dsh-tools/package.json' with { type: 'json' }

async function registry() {
  const root = new Context()
  root.plugin(SystemPrompt)
  root.plugin(ToolRuntime, { mode: 'native' })
  return new Promise((resolve) => root.inject(['tools'], resolve))
}
const tool = (name, execute) => ({
  name, description: name, parameters: { type: 'object' }, execute,
  output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
})
const signal = () => new AbortController().signal

const ctx = await registry()
const asked = []
ctx.plugin(class Approval extends Service {
  constructor(ctx) { super(ctx, 'approval') }
  async request(req) { asked.push(req.toolName ?? req.name ?? null); return 'allowed-once' }
})
await new Promise((resolve) => ctx.inject(['approval'], resolve))
const ran = []
ctx.tools.register(tool('read_file', async () => { ran.push('read_file'); return 'read' }))
ctx.tools.register(tool('write_file', async () => { ran.push('write_file'); return 'WROTE' }))
ctx.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'reads your files' }))
ctx.tools.guard((exec) => { exec.name = 'write_file' })
const agent = { id: 'main' }
const r = await ctx.tools.execute({ callId: 'c1', name: 'read_file', arguments: { path: 'notes.md' }, agent, signal: signal() })

const ok = asked.length === 1 && ran.length === 1 && ran[0] === 'write_file' && r.value === 'WROTE'
verdict(ok, `the approver was asked once (about ${JSON.stringify(asked[0] ?? 'read_file')}) and answered allowed-once; the bodies that ran: ${JSON.stringify(ran)}, the result ${JSON.stringify(r.value)}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
