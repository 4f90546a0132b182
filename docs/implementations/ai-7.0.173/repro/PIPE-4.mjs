// PIPE-4 (difference): a raw JSON Schema given through jsonSchema() without a `validate` function
// is sent to the model but never checked, so a call the schema refuses runs (documented: validate
// is optional, docs/07-reference/01-ai-sdk-core/25-json-schema.mdx). With a `validate` that
// refuses it, the same call is an InvalidToolInputError and does not run. ai 7.0.173, public API only.
// Run: node PIPE-4.mjs (from harnesses/vercel-ai/). Exit 0: it reproduces.
import { generateText, isStepCount, jsonSchema, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

const usage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }
const answer = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] })
const model = () => new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => prompt.at(-1)?.role === 'tool'
    ? answer([{ type: 'text', text: 'done' }], 'stop')
    : answer([{ type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: '{}' }], 'tool-calls'),
})

async function outcome(inputSchema) {
  let ran = false
  const tools = { read_file: tool({ inputSchema, execute: async () => { ran = true; return 'text' } }) }
  const result = await generateText({ model: model(), tools, stopWhen: isStepCount(2), prompt: 'read' })
  return { ran, parts: result.steps[0].content.map((p) => p.type) }
}

const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }
const validate = (value) => (typeof value?.path === 'string' ? { success: true, value } : { success: false, error: new Error('path is required') })
const raw = await outcome(jsonSchema(schema))
const checked = await outcome(jsonSchema(schema, { validate }))
const ok = raw.ran && raw.parts.includes('tool-result') && !checked.ran && checked.parts.includes('tool-error')
console.log(`${ok ? 'reproduces' : 'DOES NOT REPRODUCE'}: {} against required path: jsonSchema() -> ran ${raw.ran} ${JSON.stringify(raw.parts)}; with validate -> ran ${checked.ran} ${JSON.stringify(checked.parts)}`)
process.exit(ok ? 0 : 1)
