// PRE-6 on @deepseek-ai/dsh-tools: a tools/pre-execute listener that denies without a
// reason ({kind: 'deny'}, e.g. `reason: policy.message` of a policy with no message) lets
// the call run: the decision is read for its reason only, and an undefined reason is no
// denial. lib/types/index.d.ts (PreToolDecision): "`allow` runs the call; `deny`
// materializes an error". Exit 0: the behaviour reproduces; 1: it no longer does.
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
const policy = {} // a policy whose message is missing
ctx.on('tools/pre-execute', () => ({ kind: 'deny', reason: policy.message }))
const r = await ctx.tools.execute({ callId: 'c1', name: 'rm', arguments: {}, signal: signal() })

const withReason = await registry()
let ranToo = false
withReason.tools.register(tool('rm', async () => { ranToo = true; return 'removed' }))
withReason.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'no' }))
const denied = await withReason.tools.execute({ callId: 'c1', name: 'rm', arguments: {}, signal: signal() })

verdict(ran && !r.isError && r.value === 'removed' && !ranToo && denied.isError,
  `{kind: 'deny', reason: undefined} -> body ran=${ran}, isError=${r.isError}; {kind: 'deny', reason: 'no'} -> body ran=${ranToo}, isError=${denied.isError}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
