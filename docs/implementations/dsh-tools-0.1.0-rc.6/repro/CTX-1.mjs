// CTX-1 on @deepseek-ai/dsh-tools: a context the body deferred is dropped when a
// tools/execute wrapper fails after the body returned (a wrapper that throws, or one that
// returns a non-result): the error result has no additionalContexts. A body that throws
// keeps them. README: "`additionalContexts` preserves every deferred or post-execute
// identified `UserMessage` for the loop's post-result FIFO".
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

const note = { role: 'user', content: 'the build log is at /tmp/build.log' }
async function run(wrapper, bodyThrows = false) {
  const ctx = await registry()
  ctx.tools.register(tool('build', async (_args, exec) => {
    exec.deferContext(note)
    if (bodyThrows) throw new Error('build failed')
    return 'built'
  }))
  if (wrapper) ctx.on('tools/execute', wrapper)
  return ctx.tools.execute({ callId: 'c1', name: 'build', arguments: {}, signal: signal() })
}
const thrown = await run(async (_exec, next) => { await next(); throw new Error('metrics backend down') })
const returned42 = await run(async (_exec, next) => { await next(); return 42 })
const bodyThrew = await run(undefined, true)

const kept = (r) => JSON.stringify(r.additionalContexts ?? [])
verdict(thrown.isError && !thrown.additionalContexts && returned42.isError && !returned42.additionalContexts &&
  bodyThrew.isError && kept(bodyThrew) === JSON.stringify([note]),
  `wrapper throws -> ${kept(thrown)}; wrapper returns 42 -> ${kept(returned42)}; body throws -> ${kept(bodyThrew)}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
