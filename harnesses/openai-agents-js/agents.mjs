// The scenario language on the OpenAI Agents SDK for JavaScript (npm @openai/agents),
// driven offline by the SDK's own scripted model.
//
// Every `call` action is one streamed run, run(agent, input, {stream: true}) (`core:run.mjs`),
// consumed as a host consumes it; the Agent's model is the SDK's ScriptedModel
// (@openai/agents-core/testing): turn 1 is the scenario's function call(s), turn 2 the text
// "done". A `batch` is several function calls in one model turn. No network: the model is a
// test double and tracing is disabled (setTracingDisabled).
//
// The harness maps; it never judges, never fixes what the SDK does and builds no mechanism
// the SDK lacks. `core:F:N` = node_modules/@openai/agents-core/dist/F line N, `d.ts` its
// declarations, of the pinned version (0.20.0). It is the JavaScript twin of
// conformance/adapters/openai_agents.py (the Python SDK) and maps the same stages onto the
// same-named JavaScript APIs. Every declared stage and its SDK API:
//
// - tool -> tool({name, description, parameters, strict: false, execute}) (core:tool.mjs:700-905,
//   d.ts tool.d.ts:777-800: "A JSON schema of the tool"); the body is handed the parsed input,
//   the RunContext and the invocation details (their toolCall item and signal,
//   core:tool.mjs:744-790). scope -> isEnabled(runContext, agent) (tool.d.ts:269): a scoped tool
//   is enabled only for the Agent named after the call's agent; a global one gives way to it.
// - a call's agent -> the Agent's name (a call with none: an Agent named toolreg-no-agent;
//   the SDK has no call outside an agent).
// - caller signal -> run(..., {signal}) (SharedRunOptions.signal, run.d.ts:187); the body's
//   signal is details.signal (what the SDK hands execute). A call withoutSignal: the caller
//   supplies none (a turn of such calls only: run() gets no signal option).
// - pre-execute (one listener) -> the tool's needsApproval policy (tool.d.ts:39,765;
//   asked with (runContext, parsed input, callId)): allow -> false, ask -> true, deny ->
//   false plus a tool input guardrail answering rejectContent(reason) (the SDK's only
//   pre-body denial). Any other answer is handed to the SDK as is. A chain of pre-execute
//   listeners is skipped: a tool has one policy.
// - approval -> interrupt then resume: result.interruptions (RunToolApprovalItem) -> the
//   scenario's approval script -> allowed-once: state.approve(item), rejected:
//   state.reject(item); the SDK has no word for other answers or a raising approval
//   backend: the host does not resume and the call's answer is `interrupted`.
// - guards -> inputGuardrails, a ToolInputGuardrailDefinition each (toolGuardrail.d.ts):
//   nothing -> {behavior: {type: 'allow'}}, a string -> rejectContent(reason); anything else
//   returned to the SDK as is.
// - post-execute -> outputGuardrails (ToolOutputGuardrailDefinition): accept -> allow,
//   block -> rejectContent(feedback); anything else returned as is.
// - observers -> the host's consumer of the streamed run's `tool_output` run item events
//   (RunItemStreamEvent, the SDK's per-result notification: an executed call, a guardrail
//   rejection and an approval rejection alike).
// - scheduler -> several function calls in one model turn; maxParallel ->
//   toolExecution.maxFunctionToolConcurrency (runner/runConfig.d.ts).
// - timeout-policy -> the tool's timeoutMs (timeoutBehavior 'error_as_result', the default;
//   invokeFunctionToolWithTimeout races the body, core:tool.mjs:563-640).
// - unknown tool -> toolNotFoundBehavior: 'return_error_to_model' (run.d.ts:146).
// - schemas -> the tools of the request body the SDK's own Responses model builds
//   (OpenAIResponsesModel of @openai/agents-openai, handed a client that keeps the body of
//   responses.create and answers nothing), through the kit's one wire projection (`modelEntry`: the envelope type and a boolean
//   strict dropped, every other key kept).
//
// Error results: the SDK's function tool output has no error flag; the harness knows which
// of its own callbacks closed a call (a guardrail's or the policy's rejectContent, an
// approval rejection) and which bodies threw (the SDK's default errorFunction then gives the
// model 'An error occurred while running the tool...', core:tool.mjs:518): those results are
// isError with the text the model got. `Tool 'X' not found.` -> UNKNOWN_TOOL,
// `Tool 'X' timed out after Nms.` -> TOOL_TIMEOUT. A run that throws: answer `raised`.

import { readFileSync } from 'node:fs'

import { Agent, run, setTracingDisabled, tool } from '@openai/agents-core'
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing'
import { OpenAIResponsesModel } from '@openai/agents-openai'

import {
  batchResults,
  Binding,
  callsOf,
  decode,
  describeError,
  errorResult,
  Inexpressible,
  jsonable,
  looksOn,
  modelEntry,
  runActions,
  ScriptError,
  Session,
  settle,
  stepKinds,
  successResult,
  textOf,
  unexpressed,
  wellFormed,
  wireText,
  writesAsCaller,
} from '@toolreg/interpreter'

// the package's exports map has no ./package.json: read it beside this harness's node_modules
const UPSTREAM = JSON.parse(readFileSync(new URL('./node_modules/@openai/agents/package.json', import.meta.url), 'utf8'))

export const IMPLEMENTATION = { name: '@openai/agents', version: UPSTREAM.version, language: 'typescript' }

export const CAPABILITIES = ['approval', 'scopes', 'scheduler', 'timeout-policy', 'pre-execute', 'guards', 'post-execute', 'observers']

export const MISSING = {
  'agentless-calls':
    'every SDK call belongs to an Agent and approvals go to whoever called run(): PRE-4\'s no-agent case has no counterpart',
  wrappers: "no around-wrapper of a function tool's body: execute is the body itself",
  finalizer: 'no last-mile content stage; toolErrorFormatter only rewrites the SDK\'s own error messages',
  classifier: 'no per-tool concurrency classification; maxFunctionToolConcurrency is one run-wide limit',
  'code-mode': 'no code mode',
  presentation: 'no presentation metadata on a function tool',
  'registry-mutation': "an Agent's tool list is fixed for a run; no register/dispose",
  'nested-calls': 'a function tool cannot run a call through the same pipeline (agents as tools start a new run)',
}

export const CLOSED_FORMS = ['error-result', 'raised', 'interrupted']

const NO_AGENT = 'toolreg-no-agent'
const NOT_FOUND = /^Tool '.*' not found\.$/s // core:runner/turnResolution.mjs:21
const TIMED_OUT = /^Tool '.*' timed out after \d+ms\.$/s // core:tool.mjs:522

setTracingDisabled(true)

// --------------------------------------------------------------------------- views

/** What the needsApproval policy is handed, under the kit's names: (context, parsed input, call id). */
class PolicyCall {
  constructor(callId, name, agent, input) {
    this.callId = callId
    this.name = name
    this.agent = agent
    this.arguments = input
  }
}

/**
 * A function call item of the SDK (protocol.FunctionCallItem: callId, name, arguments as JSON
 * text) seen under the kit's names; `arguments` is read parsed and written as JSON text, as a
 * hook author rewriting the call would. `agent` is the Agent the SDK handed along.
 */
class CallItemView {
  constructor(item, agent, extra = {}) {
    this.item = item
    this.agentObject = agent
    Object.assign(this, extra)
  }
  get callId() { return this.item.callId }
  set callId(v) { this.item.callId = v }
  get name() { return this.item.name }
  set name(v) { this.item.name = v }
  get arguments() { return parsed(this.item.arguments) }
  set arguments(v) { this.item.arguments = JSON.stringify(v) }
  get agent() { return agentName(this.agentObject) }
  set agent(v) { this.agentObject = v }
}

/** The body's view: execute(input, runContext, details); details.toolCall is the call item. */
class BodyView extends CallItemView {
  constructor(input, details, agent) {
    super(details?.toolCall ?? {}, agent)
    this.input = input
    this.details = details
  }
  get arguments() { return this.input }
  set arguments(v) { this.input = v }
  get signal() { return this.details?.signal }
  set signal(v) { this.details.signal = v }
}

/** What the host's stream loop has for one result: the tool_output item and the tool_called item. */
class ToolOutput {
  constructor(item, called) {
    this.item = item
    this.called = called
  }
}

function agentName(agent) {
  const name = typeof agent === 'string' ? agent : agent?.name
  return name === undefined || name === NO_AGENT ? null : name
}

function parsed(text) {
  if (typeof text !== 'string') return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** An error result with the text the model got and, when the harness knows it, its code. */
function failure(text, code) {
  return errorResult(text, code ? { code } : undefined)
}

// --------------------------------------------------------------------------- binding

export class AgentsBinding extends Binding {
  constructor() {
    super()
    this.classify = undefined // (callId, output, text) -> result JSON, set by the run
    this.itemResult = undefined // (tool_output item) -> result JSON, set by the run
  }

  read(obj, key) {
    if (obj instanceof ToolOutput) {
      if (key === 'callId') return obj.item.rawItem.callId
      if (key === 'agent') return agentName(obj.item.agent)
      if (key === 'name' || key === 'arguments') {
        if (obj.called === undefined) throw new TypeError(`no tool_called item reported the call's ${key}`)
        return key === 'name' ? obj.called.name : parsed(obj.called.arguments)
      }
      return super.read(obj.item, key)
    }
    if (isOutputItem(obj) && key === 'value') return obj.output
    if (isApprovalItem(obj)) {
      if (key === 'callId') return obj.rawItem.callId
      if (key === 'name') return obj.name
      if (key === 'arguments') return parsed(obj.arguments)
      if (key === 'agent') return agentName(obj.agent)
    }
    return super.read(obj, key)
  }

  write(obj, key, value) {
    if (obj instanceof ToolOutput) {
      if (key === 'callId') {
        obj.item.rawItem.callId = value
        if (obj.called !== undefined) obj.called.callId = value
      } else if (key === 'agent') obj.item.agent = value
      else if (key === 'name' || key === 'arguments') {
        if (obj.called === undefined) throw new TypeError(`no tool_called item reported the call's ${key}`)
        obj.called[key] = key === 'arguments' ? JSON.stringify(value) : value
      } else super.write(obj.item, key, value)
      return
    }
    if (isOutputItem(obj) && key === 'value') return void (obj.output = value)
    if (isApprovalItem(obj)) {
      if (key === 'callId') return void (obj.rawItem.callId = value)
      if (key === 'name') return void (obj.rawItem.name = value)
      if (key === 'arguments') return void (obj.rawItem.arguments = JSON.stringify(value))
    }
    return super.write(obj, key, value)
  }

  keys(obj) {
    if (isApprovalItem(obj)) return ['type', 'rawItem', 'agent', 'toolName', 'callId', 'name', 'arguments']
    return super.keys(obj)
  }

  agent(execution) {
    if (execution instanceof ToolOutput) return agentName(execution.item.agent)
    if (isApprovalItem(execution)) return agentName(execution.agent)
    return super.agent(execution)
  }

  callId(execution) {
    if (execution instanceof ToolOutput) return execution.item.rawItem?.callId ?? null
    if (isApprovalItem(execution)) return execution.rawItem?.callId ?? null
    return super.callId(execution)
  }

  toolName(execution) {
    if (execution instanceof ToolOutput) return execution.called?.name ?? null
    if (isApprovalItem(execution)) return execution.name ?? null
    return super.toolName(execution)
  }

  arguments(execution) {
    if (execution instanceof ToolOutput) return execution.called === undefined ? undefined : parsed(execution.called.arguments)
    if (isApprovalItem(execution)) return parsed(execution.arguments)
    return super.arguments(execution)
  }

  /** A RunToolApprovalItem shows its approver `arguments`: the call's JSON text, parsed. */
  requestArguments(request) {
    if (isApprovalItem(request)) {
      const shown = request.arguments
      return shown === undefined ? super.requestArguments({}) : jsonable(parsed(shown))
    }
    return super.requestArguments(request)
  }

  resultJson(result) {
    if (isOutputItem(result)) {
      if (this.itemResult !== undefined) return this.itemResult(result)
      return successResult(result.output, sentText(result))
    }
    if (result instanceof GuardrailOutput && this.classify !== undefined) {
      return this.classify(result.callId, result.output, textOf(result.output))
    }
    if (result instanceof GuardrailOutput) return successResult(result.output, textOf(result.output))
    return jsonable(result)
  }
}

/** The raw output an output guardrail is handed, with the call it belongs to. */
class GuardrailOutput {
  constructor(callId, output) {
    this.callId = callId
    this.output = output
  }
}

function isOutputItem(obj) {
  return obj !== null && typeof obj === 'object' && obj.type === 'tool_call_output_item'
}

function isApprovalItem(obj) {
  return obj !== null && typeof obj === 'object' && obj.type === 'tool_approval_item'
}

/** The text the model gets for a call: the output item's raw output. */
function sentText(item) {
  const output = item.rawItem?.output
  if (typeof output === 'string') return output
  if (output && typeof output === 'object' && output.type === 'text' && typeof output.text === 'string') return output.text
  return textOf(item.output)
}

// --------------------------------------------------------------------------- what the SDK cannot express

/** Why the SDK cannot express this scenario, when it cannot. */
function unsupported(scenario) {
  const missing = unexpressed(scenario, MISSING)
  if (missing !== undefined) return missing
  if (writesAsCaller(scenario)) {
    // as the Python twin (conformance/adapters/openai_agents.py): no caller-side object to write
    return "the caller's afterInvoke/afterResult writes: the caller is the Runner's own loop over the scripted model's function calls"
  }
  const steps = stepKinds(scenario)
  if (steps.has('deferContext') || steps.has('concludeTurn')) return 'no deferred contexts or turn conclusion in the SDK'
  if ((scenario.preExecute ?? []).length > 1) return 'one needsApproval policy per tool: no chain of pre-execute listeners'
  const listeners = ['preExecute', 'guards', 'postExecute', 'observers'].flatMap((k) => scenario[k] ?? [])
  if (listeners.some((e) => e.scope !== undefined && e.scope !== null)) {
    return 'guardrails, approval policies and run hooks are not registered per agent'
  }
  const observers = scenario.observers ?? []
  if (observers.some((o) => (o.steps ?? []).some((step) => step && typeof step === 'object' && 'throw' in step))) {
    return "an observer is the host's own stream loop over the run's tool_output events: whether a raising one is contained is the host's code, not the SDK's"
  }
  if (observers.slice(0, -1).some((o) => !looksOn(o))) {
    return "one per-result notification per run: several observers are the host's own loop over one event"
  }
  for (const spec of scenario.postExecute ?? []) {
    for (const step of spec.steps ?? []) {
      const ret = step && typeof step === 'object' ? step.return : undefined
      if (ret && typeof ret === 'object' && !Array.isArray(ret)) {
        if (ret.kind === 'accept' && ('content' in ret || 'value' in ret)) return 'an output guardrail cannot replace a result with another success'
        if ('additionalContexts' in ret) return 'no deferred contexts in the SDK'
      }
    }
  }
  return undefined
}

// --------------------------------------------------------------------------- the run

/** The provider request was taken; no answer is made up. */
class Captured extends Error {}

const ALLOW = { behavior: { type: 'allow' } }
const reject = (message) => ({ behavior: { type: 'rejectContent', message } })

class Run {
  constructor(scenario, session) {
    this.scenario = scenario
    this.session = session
    this.closed = new Set() // call ids closed by a harness callback (a rejection)
    this.threw = new Set() // call ids whose body threw
    this.denials = new Map() // call id -> a pre-execute deny reason
    this.failed = new Map() // call id -> why its approval got no answer
    this.agents = new Map() // call id -> the calling agent
    this.called = new Map() // call id -> the tool_called item's raw item
    this.registrations = []
    this.tools = []
    const specs = scenario.tools ?? []
    const scoped = new Set(specs.filter((t) => t.scope != null).map((t) => `${t.name}\u0000${t.scope}`))
    for (const spec of specs) {
      const key = spec.key ?? spec.name
      try {
        this.tools.push(this.tool(spec, scoped))
        this.registrations.push({ key, ok: true })
      } catch (e) {
        if (e instanceof Inexpressible || e instanceof ScriptError) throw e
        this.registrations.push({ key, ok: false, error: describeError(e) })
      }
    }
    this.observers = (scenario.observers ?? []).map((o) => session.observer(o))
    this.model = undefined
  }

  tool(spec, scoped) {
    const body = this.session.toolBody(spec)
    const scope = spec.scope
    const options = {
      name: spec.name,
      description: spec.description ?? '',
      parameters: decode(spec.parameters ?? { type: 'object' }),
      strict: false,
      execute: async (input, runContext, details) => {
        const callId = details?.toolCall?.callId
        try {
          return await body(input, new BodyView(input, details, undefined)) // execute is handed no agent
        } catch (e) {
          if (callId !== undefined) this.threw.add(callId)
          throw e
        }
      },
      // ToolEnabledPredicate: ({runContext, agent}) (core:tool.mjs:923-928)
      isEnabled: async ({ agent }) =>
        scope != null ? agent.name === scope : !scoped.has(`${spec.name}\u0000${agent.name}`),
    }
    const inputGuardrails = []
    if ((this.scenario.preExecute ?? []).length > 0) {
      options.needsApproval = this.policy(spec)
      inputGuardrails.push({ type: 'tool_input', name: 'pre', run: async (data) => this.preDeny(data) })
    }
    for (const g of this.scenario.guards ?? []) inputGuardrails.push({ type: 'tool_input', name: g.id, run: this.guard(g) })
    if (inputGuardrails.length > 0) options.inputGuardrails = inputGuardrails
    const post = (this.scenario.postExecute ?? []).map((p) => ({ type: 'tool_output', name: p.id, run: this.post(p) }))
    if (post.length > 0) options.outputGuardrails = post
    if (this.scenario.timeoutPolicy && 'timeoutMs' in spec) options.timeoutMs = decode(spec.timeoutMs)
    const definition = tool(options)
    for (const [key, value] of Object.entries(spec.extra ?? {})) {
      if (key in definition) throw new Inexpressible(`extra field ${JSON.stringify(key)} is a FunctionTool field`)
      definition[key] = value
    }
    return definition
  }

  policy(spec) {
    const listener = this.session.preListener(this.scenario.preExecute[0])
    return async (runContext, input, callId) => {
      const view = new PolicyCall(callId, spec.name, this.agents.get(callId) ?? null, input)
      const decision = await listener(view, async () => this.session.binding.preDecision({ kind: 'allow' }))
      if (!wellFormed(decision, 'pre-execute')) return decision // the policy's own value: the SDK decides
      if (decision.kind === 'deny') {
        this.denials.set(callId, decision.reason)
        return false
      }
      return decision.kind === 'ask'
    }
  }

  async preDeny(data) {
    const callId = data.toolCall.callId
    if (this.denials.has(callId)) {
      this.closed.add(callId)
      const reason = this.denials.get(callId)
      this.denials.delete(callId)
      return reject(reason)
    }
    return ALLOW
  }

  guard(spec) {
    const guard = this.session.guard(spec)
    return async (data) => {
      const reason = guard(new CallItemView(data.toolCall, data.agent))
      if (reason === undefined || reason === null) return ALLOW
      if (typeof reason === 'string') {
        this.closed.add(data.toolCall.callId)
        return reject(reason)
      }
      return reason // not a guardrail output: the SDK decides what it means
    }
  }

  post(spec) {
    const listener = this.session.postListener(spec)
    return async (data) => {
      const callId = data.toolCall.callId
      const decision = await listener(new CallItemView(data.toolCall, data.agent), new GuardrailOutput(callId, data.output), async () =>
        this.session.binding.postDecision({ kind: 'accept' }),
      )
      const kind = wellFormed(decision, 'post-execute') ? decision.kind : undefined
      if (kind === 'accept' && Object.keys(decision).length === 1) return ALLOW
      if (kind === 'block' && typeof decision.feedback === 'string') {
        this.closed.add(callId)
        return reject(decision.feedback)
      }
      return decision // not a guardrail output: the SDK decides what it means
    }
  }

  /** One model turn with these calls; one answer per call. */
  async calls(calls, parallel) {
    for (const c of calls) this.agents.set(c.callId, c.agent ?? null)
    const agentNames = new Set(calls.map((c) => c.agent ?? null))
    if (agentNames.size > 1) throw new Inexpressible('one model turn belongs to one agent; the batch mixes agents')
    const controllers = []
    const items = []
    for (const call of calls) {
      const { controller, arguments: args } = this.session.caller(call)
      controllers.push(controller)
      const item = functionCall(call.name, wireText(args), { callId: call.callId })
      items.push(this.session.trackCaller(call.callId, item))
    }
    // a caller that supplies no signal (withoutSignal, CANCEL-1) hands run() none
    const signals = calls
      .map((call, i) => (call.withoutSignal ? null : this.session.binding.controllerSignal(controllers[i])))
      .filter((s) => s !== null)
    const signal = signals.length > 0 ? AbortSignal.any(signals) : undefined
    const model = new ScriptedModel([items, [assistantMessage('done')]])
    this.model = model
    const agent = new Agent({ name: [...agentNames][0] ?? NO_AGENT, model, tools: [...this.tools] })
    const options = {
      stream: true,
      ...(signal !== undefined ? { signal } : {}),
      toolNotFoundBehavior: 'return_error_to_model',
      ...(parallel !== undefined ? { toolExecution: { maxFunctionToolConcurrency: parallel } } : {}),
    }
    const answers = new Map()
    let input = 'go'
    const rounds = new Set()
    for (;;) {
      const outputs = new Map()
      let result
      try {
        result = await this.stream(agent, input, options, outputs)
      } catch (e) {
        if (e instanceof ScriptError || e instanceof Inexpressible) throw e
        if (process.env.TOOLREG_DEBUG) console.error(e); return calls.map(() => ({ raised: describeError(e) }))
      }
      for (const [callId, item] of outputs) answers.set(callId, { result: this.resultOf(item) })
      const interruptions = result.interruptions ?? []
      if (interruptions.length === 0) break
      const asked = interruptions.map((i) => i.rawItem.callId).join('\u0000')
      if (rounds.has(asked)) {
        // resumed with every answer given, the run came back with the same pending approvals:
        // a host stops there (a cancelled run makes no progress; an approval the SDK did not
        // take, e.g. one whose call id was changed, is asked again)
        const why = signal?.aborted
          ? 'the caller cancelled: the resumed run returned with its approvals still pending'
          : 'the resumed run asked again for the approvals it was given'
        for (const item of interruptions) answers.set(item.rawItem.callId, { interrupted: why })
        break
      }
      rounds.add(asked)
      const pending = await this.decide(result.state, interruptions)
      if (pending.length > 0) {
        for (const callId of pending) answers.set(callId, { interrupted: this.failed.get(callId) ?? 'waiting for approval' })
        break
      }
      input = result.state
    }
    return calls.map((c) => answers.get(c.callId) ?? { raised: 'no output for this call' })
  }

  /** One streamed run, as a host consumes it: each tool_output item kept and handed to the observers. */
  async stream(agent, input, options, outputs) {
    const result = await run(agent, input, options)
    for await (const event of result) {
      if (event.type !== 'run_item_stream_event') continue
      const item = event.item
      if (event.name === 'tool_called' && item.rawItem?.type === 'function_call') {
        this.called.set(item.rawItem.callId, item.rawItem)
      } else if (event.name === 'tool_output' && isOutputItem(item)) {
        const callId = item.rawItem.callId
        outputs.set(callId, item)
        for (const observer of this.observers) await observer(new ToolOutput(item, this.called.get(callId)), item)
      }
    }
    await result.completed
    if (result.error) throw result.error
    return result
  }

  /** The scenario's approver answers each interruption; the call ids left undecided. */
  async decide(state, items) {
    if (this.scenario.approval === undefined) return items.map((i) => i.rawItem.callId)
    const approver = this.session.approvalRequest(this.scenario.approval)
    const pending = []
    for (const item of items) {
      const callId = item.rawItem.callId
      let answer
      try {
        answer = await approver(item)
      } catch (e) {
        if (e instanceof ScriptError) throw e
        this.failed.set(callId, `the approval service raised: ${describeError(e)}`)
        pending.push(callId)
        continue
      }
      if (answer === 'allowed-once') state.approve(item)
      else if (answer === 'rejected') {
        this.closed.add(callId)
        state.reject(item)
      } else pending.push(callId) // approve/reject take only the item: no other answer can be passed
    }
    return pending
  }

  /** A call's tool_output item as the kit's result, the same for the caller and the observers. */
  resultOf(item) {
    const callId = item.rawItem.callId
    const text = sentText(item)
    const name = callsOf(this.scenario).find((c) => c.callId === callId)?.name
    const offered = new Set((this.model?.calls[0]?.request?.tools ?? []).map((t) => t.name))
    if (!offered.has(name) && NOT_FOUND.test(text)) return failure(text, 'UNKNOWN_TOOL')
    return this.classify(callId, item.output, text)
  }

  classify(callId, output, text) {
    if (this.closed.has(callId) || this.threw.has(callId)) return failure(text)
    if (this.scenario.timeoutPolicy && TIMED_OUT.test(text)) return failure(text, 'TOOL_TIMEOUT')
    return successResult(output, text)
  }

  /**
   * What a provider request carries for the enabled tools: the request body the SDK's own
   * Responses model builds (OpenAIResponsesModel, @openai/agents-openai), taken from a client
   * whose responses.create keeps the body and refuses to answer (no network), through the
   * kit's one wire projection; the values are the SDK's own objects, never a copy.
   */
  async schemas(scope) {
    let body
    const client = { responses: { create: async (requestData) => { body = requestData; throw new Captured() } } }
    const model = new OpenAIResponsesModel(client, 'toolreg-model')
    const agent = new Agent({ name: scope ?? NO_AGENT, model, tools: [...this.tools] })
    try {
      await run(agent, 'toolreg schemas')
    } catch (e) {
      if (!(e instanceof Captured)) throw e
    }
    return (body?.tools ?? []).filter((t) => t.type === 'function').map((entry) => modelEntry(entry))
  }
}

/**
 * Run one scenario on the SDK and return its trace (trace.schema.json).
 * Throws Inexpressible (skipped) or ScriptError (errored).
 */
export async function runScenario(scenario) {
  const why = unsupported(scenario)
  if (why !== undefined) throw new Inexpressible(why)
  const binding = new AgentsBinding()
  const session = new Session(scenario, binding)
  const runner = new Run(scenario, session)
  binding.classify = (callId, output, text) => runner.classify(callId, output, text)
  binding.itemResult = (item) => runner.resultOf(item)
  const actions = await runActions(scenario, {
    call: async (call) => (await runner.calls([call], undefined))[0],
    batch: async (calls, maxParallel) => batchResults(await runner.calls(calls, maxParallel ?? 4)),
    schemas: (scope) => runner.schemas(scope ?? null),
    unsupported: (action) => {
      throw new Inexpressible(`action ${JSON.stringify(Object.keys(action))} has no SDK counterpart`)
    },
  })
  await settle(session)
  return { registrations: runner.registrations, actions, events: session.events.slice() }
}
