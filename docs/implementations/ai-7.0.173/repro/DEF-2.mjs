// DEF-2 (difference): the request's tool entry is built by whitelist (an unknown field of the
// tool never reaches the model), but its inputSchema is the very object the tool's jsonSchema()
// holds: a provider or middleware that edits options.tools[i].inputSchema in place changes every
// later request (the aliasing class of vercel/ai#14568 / #14715). ai 7.0.173, public API only.
// Run: python docs/implementations/repro.py docs/implementations/ai-7.0.173. Exit 0: it reproduces.
import { generateText, jsonSchema, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

const usage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }
const requests = []
const model = new MockLanguageModelV4({
  doGenerate: async (options) => {
    requests.push({ entry: options.tools[0], text: JSON.stringify(options.tools[0]) })
    options.tools[0].inputSchema.properties.path.type = 'number' // a provider adapting the schema in place
    return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
  },
})
const schema = jsonSchema({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] })
const readFile = tool({ description: 'Read a file.', inputSchema: schema, execute: async () => 'text' })
readFile['x-owner'] = 'platform-team' // host-only data on the tool object
const tools = { read_file: readFile }

await generateText({ model, tools, prompt: 'first' })
await generateText({ model, tools, prompt: 'second' })
const [first, second] = requests
const whitelisted = !('x-owner' in first.entry)
const aliased = first.entry.inputSchema === schema.jsonSchema
const leaked = first.text.includes('"string"') && second.text.includes('"number"')
const ok = whitelisted && aliased && leaked
console.log(`${ok ? 'reproduces' : 'DOES NOT REPRODUCE'}: x-owner kept out: ${whitelisted}; inputSchema is the tool's own object: ${aliased}; second request sees the first one's edit: ${leaked}`)
process.exit(ok ? 0 : 1)
