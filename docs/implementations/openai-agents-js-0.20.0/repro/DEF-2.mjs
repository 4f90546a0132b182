// DEF-2 (difference): the Responses request body the SDK builds for a tool carries the tool's own
// parameters object (whitelisted keys: type, name, description, parameters, strict): an in-place
// edit of one request's schema (by a provider wrapper or middleware) is in every later request.
// No network: the OpenAI client is a stand-in whose responses.create keeps the body and throws.
// @openai/agents-core / @openai/agents-openai 0.20.0, public API only.
// Run: python docs/implementations/repro.py docs/implementations/openai-agents-js-0.20.0. Exit 0: it reproduces.
import { Agent, run, setTracingDisabled, tool } from '@openai/agents-core'
import { OpenAIResponsesModel } from '@openai/agents-openai'

setTracingDisabled(true)
const t = tool({
  name: 'read_file', description: 'reads', strict: false, execute: async () => 'x',
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
})
async function requestTools() {
  let body
  const client = { responses: { create: async (b) => { body = b; throw new Error('no network') } } }
  try {
    await run(new Agent({ name: 'a', model: new OpenAIResponsesModel(client, 'm'), tools: [t] }), 'go')
  } catch {}
  return body.tools
}
const first = await requestTools()
console.log('request tool keys:', Object.keys(first[0]).sort().join(', '))
first[0].parameters.properties.path.type = 'number'
const second = await requestTools()
console.log('next request path type:', second[0].parameters.properties.path.type)
if (second[0].parameters.properties.path.type === 'number') process.exit(0)
console.log('DOES NOT REPRODUCE')
process.exit(1)
