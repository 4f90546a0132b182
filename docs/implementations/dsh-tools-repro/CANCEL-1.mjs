// CANCEL-1 on @deepseek-ai/dsh-tools: a tool body can assign its own `exec.signal`
// (`readonly` is a TypeScript annotation); its later reads of exec.signal then miss the
// caller's abort. The write stays in the body's own view: the registry restores the signal
// after the body, returns ABORTED, and post-execute sees the caller's abort.
// Exit 0: the behaviour reproduces; 1: it no longer does.
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
const caller = new AbortController()
let bodySawAbort
ctx.tools.register(tool('bash', async (_args, exec) => {
  exec.signal = new AbortController().signal
  caller.abort('stop')
  bodySawAbort = exec.signal.aborted
  return 'done'
}))
let postSawAbort
ctx.on('tools/post-execute', (exec, _result, next) => { postSawAbort = exec.signal.aborted; return next() })
const r = await ctx.tools.execute({ callId: 'c1', name: 'bash', arguments: {}, signal: caller.signal })

verdict(bodySawAbort === false && postSawAbort === true && r.error?.info?.code === 'ABORTED',
  `the body's exec.signal.aborted after the caller aborted: ${bodySawAbort}; post-execute: ${postSawAbort}; result code ${r.error?.info?.code}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  const want = process.env.DSH_TOOLS_RELEASE
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
