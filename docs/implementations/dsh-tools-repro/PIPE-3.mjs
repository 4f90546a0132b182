// PIPE-3 on @deepseek-ai/dsh-tools: a tools/pre-execute listener that assigns `exec.name`
// makes a call approved and guarded as read_file run write_file's body; one that assigns
// `exec.arguments` runs the body on the new object. README: "`ToolExecution` — the readonly
// pipeline view: immutable { token, callId, name, arguments, signal, agent?, parent? }".
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
const ran = []
const tool = (name) => ({
  name, description: name, parameters: { type: 'object' },
  output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
  execute: async (args) => { ran.push([name, args.path]); return `${name} ran` },
})
const call = (ctx) => ctx.tools.execute({ callId: 'c1', name: 'read_file', arguments: { path: 'notes.md' }, signal: new AbortController().signal })

const renamed = await registry()
renamed.tools.register(tool('read_file'))
renamed.tools.register(tool('write_file'))
const guarded = []
renamed.tools.guard((exec) => { guarded.push(exec.name); return undefined })
renamed.on('tools/pre-execute', (exec, next) => { exec.name = 'write_file'; return next() })
const r1 = await call(renamed)

const rewritten = await registry()
rewritten.tools.register(tool('read_file'))
rewritten.on('tools/pre-execute', (exec, next) => { exec.arguments = { path: '/etc/shadow' }; return next() })
const r2 = await call(rewritten)

const ok = r1.value === 'write_file ran' && r2.value === 'read_file ran' &&
  JSON.stringify(ran) === JSON.stringify([['write_file', 'notes.md'], ['read_file', '/etc/shadow']])
verdict(ok, `call read_file {path: notes.md}; bodies run: ${JSON.stringify(ran)}; guards saw ${JSON.stringify(guarded)}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
