// POST-2 on @deepseek-ai/dsh-tools: a tools/post-execute accept that replaces the content
// is lost when the dispatch result was a wrapper's almost-result that the registry reads as
// a failure without an error -- `{isError: true, content}` with no `error`, or
// `{isError: 'false', value, content}` (a truthy string). normalizeDispatchResult copies the
// missing `error` (undefined) into the result post-execute receives; the accept's content
// replacement is applied, then publication refuses the result (`tool result must be
// losslessly JSON-serializable`) and the caller gets that error instead.
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

const seen = []
const content = [{ type: 'text', text: 'authored' }]
for (const almost of [{ isError: true, content }, { isError: 'false', value: 'v', content }]) {
  const ctx = await registry()
  ctx.tools.register(tool('read_file', async () => 'read'))
  ctx.on('tools/execute', async (_exec, next) => { await next(); return almost })
  let post
  ctx.on('tools/post-execute', (_exec, result) => {
    post = result.isError === true && result.error === undefined
    return { kind: 'accept', content: [{ type: 'text', text: 'replaced' }] }
  })
  const r = await ctx.tools.execute({ callId: 'c1', name: 'read_file', arguments: {}, signal: signal() })
  seen.push({ returned: almost.isError, postSawFailureWithoutError: post, published: r.content[0].text })
}

verdict(seen.every((s) => s.postSawFailureWithoutError && s.published === 'Error: tool result must be losslessly JSON-serializable'),
  `accept content 'replaced' after a wrapper's almost-result: ${JSON.stringify(seen)}`)

function verdict(reproduced, what) {
  const at = `@deepseek-ai/dsh-tools ${dshTools.version}`
  // in docs/implementations/dsh-tools-<release>/repro/: that release must be the one loaded
  const want = /\/dsh-tools-([^/]+)\/repro\/[^/]+$/.exec(import.meta.url)?.[1]
  if (want && want !== dshTools.version) { console.error(`expected ${want}, loaded ${at}`); process.exit(2) }
  console.log(`${reproduced ? 'reproduces' : 'does NOT reproduce'} on ${at}: ${what}`)
  process.exit(reproduced ? 0 : 1)
}
