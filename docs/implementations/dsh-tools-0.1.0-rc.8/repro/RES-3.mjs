// RES-3 on @deepseek-ai/dsh-tools: a callable that returns something outside its own type
// gets it published as given, so the result breaks ToolFailure's `message: string` or the
// content's ContentBlock[]:
// (1) a guard returning a non-string (true, 0) denies the call, with that value as
//     error.message (`if (reason !== void 0) return reason;`; ToolGuard is `string | undefined`);
// (2) a tools/execute wrapper's failure `{isError: true, error: {message: 1}}`, or one whose
//     info.code is a list, is published with that error (normalizeDispatchResult copies it);
// (3) a finalizeContent returning '' (typed `ContentBlock[] | undefined`) makes '' the content;
// (4) a body throwing an Error whose message is 42 (Error types `message: string`) fails with
//     error.message 42: an Error's `.message` is taken as is.
// Exit 0: all four reproduce; 1: one no longer does.
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
const run = async (setup, extra, body = async () => 'removed') => {
  const ctx = await registry()
  let ran = false
  ctx.tools.register(tool('rm', async () => { ran = true; return body() }, extra))
  setup(ctx)
  const r = await ctx.tools.execute({ callId: 'c1', name: 'rm', arguments: {}, signal: new AbortController().signal })
  return { ran, isError: r.isError, error: r.error, content: r.content }
}
const content = [{ type: 'text', text: 'authored' }]
const guarded = [await run((ctx) => ctx.tools.guard(() => true)), await run((ctx) => ctx.tools.guard(() => 0))]
const wrapped = [
  await run((ctx) => ctx.on('tools/execute', async () => ({ isError: true, error: { message: 1 }, content }))),
  await run((ctx) => ctx.on('tools/execute', async () => ({ isError: true, error: { message: 'coded', info: { name: 'E', code: ['A'] } }, content }))),
]
const finalized = await run(() => {}, { finalizeContent: () => '' })
const thrown = await run(() => {}, {}, async () => { throw Object.assign(new Error(), { message: 42 }) })

verdict(guarded.every((g) => g.isError && !g.ran) && guarded[0].error.message === true && guarded[1].error.message === 0 &&
  wrapped[0].isError && wrapped[0].error.message === 1 && Array.isArray(wrapped[1].error.info.code) &&
  finalized.isError === false && finalized.content === '' && thrown.isError && thrown.error.message === 42,
  `(1) guards true, 0 -> ${JSON.stringify(guarded)}; (2) wrappers -> ${JSON.stringify(wrapped.map((w) => w.error))}; ` +
  `(3) finalizeContent '' -> content ${JSON.stringify(finalized.content)}; (4) thrown -> ${JSON.stringify(thrown.error)}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
