// GUARD-1 on @deepseek-ai/dsh-tools: a tools/pre-execute decision other than exactly
// {kind: 'allow'} and without a `reason` skips every guard and dispatches the body
// (lib/index.js: `decision.kind === "allow" ? this.guardReason(exec) : decision.reason`).
// Here a guard that denies every call never runs after {kind: 'deny'}, an unknown kind, a
// near miss of 'allow' ('ALLOW', ' allow'), a bare string or a number. README (ToolGuard):
// "the returned string is a final monotonic denial reason evaluated after the reorderable
// pre-execute waterfall and before dispatch". Exit 0: the behaviour reproduces; 1: it no
// longer does.
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

const outcomes = []
for (const decision of [{ kind: 'deny' }, { kind: 'maybe' }, { kind: 'ALLOW' }, { kind: ' allow' }, 'allow', 1, { kind: 'allow' }]) {
  const ctx = await registry()
  let ran = false
  let guarded = false
  ctx.tools.register(tool('rm', async () => { ran = true; return 'removed' }))
  ctx.tools.guard(() => { guarded = true; return 'the owner forbids rm' })
  ctx.on('tools/pre-execute', () => decision)
  const r = await ctx.tools.execute({ callId: 'c1', name: 'rm', arguments: {}, signal: signal() })
  outcomes.push({ decision, guarded, ran, isError: r.isError })
}

const open = outcomes.slice(0, 6).every((o) => !o.guarded && o.ran && !o.isError)
const allowGuarded = outcomes[6].guarded && !outcomes[6].ran && outcomes[6].isError
verdict(open && allowGuarded, outcomes.map((o) => `${JSON.stringify(o.decision)}: guard ran=${o.guarded}, body ran=${o.ran}`).join('; '))

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
