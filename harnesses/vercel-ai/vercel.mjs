// The scenario language on the Vercel AI SDK (npm `ai`), driven by the SDK's own mock model.
//
// Every `call` action is one generateText() whose MockLanguageModelV4 answers its first
// request with one tool-call part per call of the action (a `batch` is several in one model
// turn) and every later request (the prompt ends with the tool results) with the text
// "done". An `ask` is a tool-approval-request: the host (this harness) hands it to the
// scenario's approval script and, when every answer has an SDK counterpart, calls
// generateText again with the history plus the tool-approval-response parts. No network.
//
// The harness maps; it never judges and never fixes what the SDK does. References like
// `dist:1234` are to node_modules/ai/dist/index.js of the pinned version (7.0.173).
// See README.md for the mapping table, the missing capabilities and the closed forms.

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

import { generateText, InvalidToolInputError, isStepCount, jsonSchema, NoSuchToolError, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

import { attemptWrite, Binding, decode, dumps, jsonable, ScriptError, Session } from '@toolreg/interpreter'
import { Inexpressible } from '@toolreg/interpreter/stdio'

const require = createRequire(import.meta.url)
const UPSTREAM = JSON.parse(readFileSync(require.resolve('ai/package.json'), 'utf8'))

export const ACTION_DEADLINE_MS = 5000
export const IMPLEMENTATION = { name: UPSTREAM.name, version: UPSTREAM.version, language: 'typescript' }

/**
 * Signing of approval requests (`experimental_toolApprovalSecret`, dist:4097 of index.d.ts):
 * off by default (the SDK's default); TOOLREG_VERCEL_APPROVAL_SECRET=<secret> turns it on.
 */
const APPROVAL_SECRET = process.env.TOOLREG_VERCEL_APPROVAL_SECRET || undefined

export const CAPABILITIES = ['pre-execute', 'guards', 'observers', 'approval', 'scopes', 'scheduler', 'timeout-policy']

export const MISSING = {
  wrappers:
    'no around-wrapper of a tool body: execute is the body itself; the only thing run around it is a ' +
    "telemetry integration's executeTool (dist:3012), which can neither change the input nor author the result",
  'post-execute':
    'no stage between a body and its published result that can accept, replace or block it ' +
    '(executeToolCall publishes the output as returned, dist:3073-3096)',
  finalizer: 'no last-mile content stage; toModelOutput only renders a success for the model and is not run for errors (dist:2037-2057)',
  classifier: 'no per-call concurrency classification: every call of a step runs concurrently, bounded by one run-wide toolCallConcurrency (dist:5465)',
  'agentless-calls':
    'approvals are not routed by agent: every tool-approval-request goes back to whoever called generateText, ' +
    "so PRE-4's no-agent case has no counterpart",
  'code-mode': 'no registry modes or run_code transport of the kit kind',
  presentation: 'no presentation metadata on a tool',
  'registry-mutation': 'the tools of a generateText call are a fixed record for the call; no register/dispose while a call runs',
  'nested-calls': 'a tool body has no API to dispatch another tool call through the same pipeline',
}

export const CLOSED_FORMS = ['error-result', 'raised', 'interrupted']

// The SDK's approval vocabulary for the kit's approval answers; the tool-approval-response
// part has `approved: boolean` and an optional `reason` (collectToolApprovals, dist:2510).
const APPROVAL_ANSWERS = {
  'allowed-once': { approved: true },
  rejected: { approved: false, reason: 'The approval service rejected the call.' },
  cancelled: { approved: false, reason: 'The approval was cancelled.' },
  unavailable: { approved: false, reason: 'The approval service is unavailable.' },
}

// --------------------------------------------------------------------------- views

/** What the toolApproval function is handed, under the kit's names: the live parsed tool call. */
class CallView {
  constructor(toolCall, runtimeContext) {
    this.toolCall = toolCall
    this.runtimeContext = runtimeContext
  }
  get callId() { return this.toolCall.toolCallId }
  set callId(v) { this.toolCall.toolCallId = v }
  get name() { return this.toolCall.toolName }
  set name(v) { this.toolCall.toolName = v }
  get arguments() { return this.toolCall.input }
  set arguments(v) { this.toolCall.input = v }
  get agent() { return this.runtimeContext?.agent ?? null }
  set agent(v) { if (this.runtimeContext) this.runtimeContext.agent = v }
}

/** The body's view: execute(input, options) (dist:5257); the tool's context carries the agent. */
class BodyView {
  constructor(name, input, options) {
    this.toolName = name
    this.input = input
    this.options = options
  }
  get callId() { return this.options.toolCallId }
  set callId(v) { this.options.toolCallId = v }
  get name() { return this.toolName }
  set name(v) { this.toolName = v }
  get arguments() { return this.input }
  set arguments(v) { this.input = v }
  get signal() { return this.options.abortSignal }
  set signal(v) { this.options.abortSignal = v }
  get agent() { return this.options.context?.agent ?? null }
  set agent(v) { if (this.options.context) this.options.context.agent = v }
}

/** What an observer is handed as the call: the onToolExecutionEnd event (dist:3073, 3089). */
class ObservedView {
  constructor(event) {
    this.event = event
  }
  get callId() { return this.event.toolCall.toolCallId }
  set callId(v) { this.event.toolCall.toolCallId = v }
  get name() { return this.event.toolCall.toolName }
  set name(v) { this.event.toolCall.toolName = v }
  get arguments() { return this.event.toolCall.input }
  set arguments(v) { this.event.toolCall.input = v }
  get agent() { return this.event.toolContext?.agent ?? null }
  set agent(v) { if (this.event.toolContext) this.event.toolContext.agent = v }
}

/**
 * What the approver is shown: the history the host sends back (result.response.messages,
 * toResponseMessages dist:5187-5196): the tool-approval-request part (approvalId, toolCallId,
 * reason) and, for the name and arguments, the assistant's tool-call part it names.
 */
class ApprovalView {
  constructor(callPart, requestPart, agent) {
    this.callPart = callPart
    this.requestPart = requestPart
    this.agent = agent // the host knows whose turn it serves; the history does not say
  }
  get approvalId() { return this.requestPart.approvalId }
  set approvalId(v) { this.requestPart.approvalId = v }
  get callId() { return this.requestPart.toolCallId }
  set callId(v) { this.requestPart.toolCallId = v }
  get name() { return this.callPart.toolName }
  set name(v) { this.callPart.toolName = v }
  get arguments() { return this.callPart.input }
  set arguments(v) { this.callPart.input = v }
  get reason() { return this.requestPart.reason }
  set reason(v) { this.requestPart.reason = v }
}

/** A result the SDK returns as a model message or an approval part (not a live tool output). */
class Settled {
  constructor(json) {
    this.json = json
  }
}

/** getErrorMessage of @ai-sdk/provider (provider/dist/index.js:178), the text of a tool-error. */
function errorMessage(error) {
  if (error == null) return 'unknown error'
  if (typeof error === 'string') return error
  if (error instanceof Error) return error.toString()
  return JSON.stringify(error)
}

function textOf(value) {
  return typeof value === 'string' ? value : dumps(jsonable(value))
}

// --------------------------------------------------------------------------- binding

export class VercelBinding extends Binding {
  constructor() {
    super()
    /** error.info for a tool-error part whose cause the SDK names unambiguously. */
    this.info = new WeakMap()
  }

  keys(obj) {
    if (obj instanceof ApprovalView) {
      return ['approvalId', 'callId', 'name', 'arguments', ...(obj.requestPart.reason != null ? ['reason'] : [])]
    }
    return super.keys(obj)
  }

  // A live tool output (tool-result / tool-error part, dist:3072-3096) read and written under
  // the kit's result names: `value` and `content` are its `output` (what the model sees is
  // rendered from it), `isError` its `type`, `error` its `error`.
  read(obj, key) {
    if (isToolOutput(obj)) {
      if (key === 'value' || key === 'content') {
        if (obj.type !== 'tool-result') throw new TypeError(`a ${obj.type} has no ${key}`)
        return obj.output
      }
      if (key === 'isError') return obj.type === 'tool-error'
      if (key === 'error') {
        if (obj.type !== 'tool-error') throw new TypeError('a tool-result has no error')
        return obj.error
      }
    }
    if (obj instanceof Settled) return super.read(obj.json, key)
    return super.read(obj, key)
  }

  write(obj, key, value) {
    if (isToolOutput(obj)) {
      if (key === 'value' || key === 'content') return void (obj.output = value)
      if (key === 'isError') return void (obj.type = value ? 'tool-error' : 'tool-result')
    }
    if (obj instanceof Settled) return super.write(obj.json, key, value)
    return super.write(obj, key, value)
  }

  resultJson(result) {
    if (result instanceof Settled) return result.json
    if (isToolOutput(result)) {
      if (result.type === 'tool-result') {
        return { isError: false, value: jsonable(result.output), content: [{ type: 'text', text: textOf(result.output) }] }
      }
      const message = errorMessage(result.error)
      const info = this.info.get(result)
      return { isError: true, error: { message, ...(info ? { info } : {}) }, content: [{ type: 'text', text: message }] }
    }
    return jsonable(result)
  }
}

function isToolOutput(obj) {
  return obj !== null && typeof obj === 'object' && (obj.type === 'tool-result' || obj.type === 'tool-error') && 'toolCallId' in obj && 'input' in obj
}

// --------------------------------------------------------------------------- helpers

/** The JSON text a model sends as a tool call's input (LanguageModelV4ToolCall.input: string). */
function wireText(value, path = '$') {
  const check = (v, p) => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new Inexpressible(`the arguments at ${p} have no JSON text (${v})`)
      return
    }
    if (Array.isArray(v)) return v.forEach((x, i) => check(x, `${p}[${i}]`))
    if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype && Object.getOwnPropertySymbols(v).length === 0) {
      return Object.entries(v).forEach(([k, x]) => check(x, `${p}.${k}`))
    }
    throw new Inexpressible(`the arguments at ${p} have no JSON text (${typeof v})`)
  }
  try {
    check(value, path)
  } catch (e) {
    if (e instanceof RangeError) throw new Inexpressible('the arguments are nested too deeply or cyclic: no JSON text')
    throw e
  }
  return JSON.stringify(value)
}

const USAGE = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
}

/** The well-formed kit decision's kind (exactly the keys its kind needs), else null. */
function wellFormed(decision) {
  const kinds = { allow: [[], []], deny: [['reason'], []], ask: [[], ['reason']] }
  if (decision === null || typeof decision !== 'object' || Array.isArray(decision)) return null
  const spec = kinds[decision.kind]
  if (!spec || !Object.hasOwn(kinds, decision.kind)) return null
  const keys = Object.keys(decision).filter((k) => k !== 'kind')
  const [required, optional] = spec
  if (!required.every((k) => keys.includes(k))) return null
  if (!keys.every((k) => required.includes(k) || optional.includes(k))) return null
  if (!keys.every((k) => typeof decision[k] === 'string')) return null
  return decision.kind
}

/** The kit's waterfall over the one toolApproval function: next() runs the rest of the chain. */
function chain(listeners, view) {
  const step = (i) => (i === listeners.length ? { kind: 'allow' } : listeners[i](view, () => step(i + 1)))
  return step(0)
}

class DeadlineExceeded extends Error {}

async function withinDeadline(pending) {
  pending.catch(() => {})
  let timer
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded()), ACTION_DEADLINE_MS)
  })
  try {
    return await Promise.race([pending, deadline])
  } finally {
    clearTimeout(timer)
  }
}

export function describeError(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`
  return `${typeof e}: ${String(e)}`
}

// --------------------------------------------------------------------------- the run

/**
 * Run one scenario on the SDK and return its trace (trace.schema.json).
 * Throws Inexpressible (skipped) or ScriptError (errored).
 */
export async function runScenario(scenario) {
  for (const key of ['wrappers', 'postExecute', 'codeDispatchLog']) {
    if ((scenario[key] ?? []).length > 0) throw new Inexpressible(`${key}: ${MISSING[key === 'postExecute' ? 'post-execute' : key] ?? 'not expressible'}`)
  }
  const binding = new VercelBinding()
  const session = new Session(scenario, binding)
  const specs = scenario.tools ?? []
  for (const spec of specs) {
    if (spec.registered === false) throw new Inexpressible(MISSING['registry-mutation'])
    if ('finalizeContent' in spec) throw new Inexpressible(`finalizeContent: ${MISSING.finalizer}`)
    if ('isConcurrencySafe' in spec) throw new Inexpressible(`isConcurrencySafe: ${MISSING.classifier}`)
  }
  const visible = (scope, agent) => scope === undefined || scope === null || scope === agent
  const pre = (scenario.preExecute ?? []).map((s) => ({ scope: s.scope, run: session.preListener(s) }))
  const guards = (scenario.guards ?? []).map((s) => ({ scope: s.scope, run: session.guard(s) }))
  const observers = (scenario.observers ?? []).map((s) => ({ scope: s.scope, run: session.observer(s) }))
  const approve = scenario.approval !== undefined ? session.approvalRequest(scenario.approval) : undefined

  /**
   * The tools record and activeTools a run by `agent` gets: its own scoped tools shadow global
   * ones; another agent's are in the record but not active (activeTools, dist:3101). Built once
   * per agent, as a host defines its tool set once.
   */
  const toolSets = new Map()
  const toolsFor = (agent) => {
    if (toolSets.has(agent)) return toolSets.get(agent)
    const tools = {}
    const active = new Set()
    const ordered = [...specs.filter((s) => !visible(s.scope, agent)), ...specs.filter((s) => s.scope == null), ...specs.filter((s) => s.scope != null && s.scope === agent)]
    for (const spec of ordered) {
      const body = session.toolBody(spec)
      const definition = tool({
        ...('description' in spec ? { description: spec.description } : {}),
        inputSchema: jsonSchema('parameters' in spec ? spec.parameters : { type: 'object' }),
        execute: (input, options) => body(input, new BodyView(spec.name, input, options)),
      })
      Object.assign(definition, spec.extra ?? {})
      tools[spec.name] = definition
      if (visible(spec.scope, agent)) active.add(spec.name)
      else active.delete(spec.name)
    }
    const set = { tools, activeTools: [...active] }
    toolSets.set(agent, set)
    return set
  }

  const timeoutFor = () => {
    if (!scenario.timeoutPolicy) return undefined
    const perTool = {}
    for (const spec of specs) if ('timeoutMs' in spec) perTool[`${spec.name}Ms`] = decode(spec.timeoutMs)
    return { tools: perTool } // getToolTimeoutMs, dist:2234
  }

  /** The generateText options of one turn (every call of it shares the run's agent). */
  const common = (agent, signal, phase, maxParallel) => {
    const { tools, activeTools } = toolsFor(agent)
    const toolsContext = Object.fromEntries(Object.keys(tools).map((name) => [name, { agent }]))
    const options = {
      tools,
      activeTools,
      toolsContext,
      runtimeContext: { agent },
      abortSignal: signal,
      stopWhen: isStepCount(2),
      maxRetries: 0,
      ...(APPROVAL_SECRET ? { experimental_toolApprovalSecret: APPROVAL_SECRET } : {}),
      ...(maxParallel !== undefined ? { toolCallConcurrency: maxParallel } : {}),
    }
    const timeout = timeoutFor()
    if (timeout) options.timeout = timeout
    if (pre.length > 0 || guards.length > 0) {
      options.toolApproval = async ({ toolCall, runtimeContext }) => {
        const view = new CallView(toolCall, runtimeContext)
        const runAgent = runtimeContext?.agent ?? null
        const objection = () => {
          for (const g of guards) {
            if (!visible(g.scope, runAgent)) continue
            const reason = g.run(view)
            if (reason !== undefined) return { type: 'denied', reason }
          }
          return 'not-applicable'
        }
        // On the resumed run the SDK asks again for every approved call
        // (validateApprovedToolApprovals, dist:5416): the approval answered the ask; guards run now.
        if (phase.resumed) return objection()
        const decision = await chain(pre.filter((p) => visible(p.scope, runAgent)).map((p) => p.run), view)
        const kind = wellFormed(decision)
        if (kind === 'deny') return { type: 'denied', reason: decision.reason }
        if (kind === 'ask') return { type: 'user-approval', ...(decision.reason !== undefined ? { reason: decision.reason } : {}) }
        if (kind === 'allow') return objection()
        // No decision: the guards still run (they are not the waterfall's to skip); without an
        // objection the value is handed to the SDK as is (normalizeToolApprovalStatus, dist:4156).
        const objected = objection()
        return objected === 'not-applicable' ? decision : objected
      }
    }
    if (observers.length > 0) {
      // One onToolExecutionEnd callback; its observers run the way notify() runs callbacks:
      // concurrently, each one's throw contained (dist:2397-2402).
      options.onToolExecutionEnd = (event) =>
        Promise.all(
          observers
            .filter((o) => visible(o.scope, event.toolContext?.agent ?? agent))
            .map(async (o) => {
              try {
                await o.run(new ObservedView(event), event.toolOutput)
              } catch (e) {
                if (e instanceof ScriptError) throw e
              }
            }),
        )
    }
    return options
  }

  /** One model turn with the given calls; the answers in call order. */
  const turn = async (calls, maxParallel) => {
    const agent = calls[0]?.agent ?? null
    const inputs = calls.map((call) => {
      const { controller, arguments: args } = session.caller(call)
      session.trackCaller(call.callId, { callId: call.callId, name: call.name, arguments: args, signal: controller.signal })
      return { call, controller, text: wireText(args) }
    })
    const signal = AbortSignal.any(inputs.map((i) => binding.controllerSignal(i.controller)))
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        // A provider's request rejects on an aborted signal (fetch); the mock does the same.
        options.abortSignal?.throwIfAborted()
        if (options.prompt.at(-1)?.role === 'tool') {
          return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] }
        }
        return {
          content: inputs.map((i) => ({ type: 'tool-call', toolCallId: i.call.callId, toolName: i.call.name, input: i.text })),
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage: USAGE,
          warnings: [],
        }
      },
    })
    const phase = { resumed: false }
    const prompt = [{ role: 'user', content: 'toolreg scenario turn' }]
    let ended
    const options = { ...common(agent, signal, phase, maxParallel), model, onEnd: (event) => void (ended = event) }
    const first = await generateText({ ...options, messages: prompt })
    const runs = [first]
    const answers = new Map()

    // The approval round trip: the requests the SDK could not decide alone (not isAutomatic).
    const requests = first.content.filter((p) => p.type === 'tool-approval-request' && !p.isAutomatic)
    if (requests.length > 0) {
      const history = first.response.messages
      const assistant = history.find((m) => m.role === 'assistant')
      const responses = []
      let stop
      if (approve === undefined) {
        stop = 'the run ended with a tool-approval-request pending: no approval service answers it'
      }
      for (const request of approve === undefined ? [] : requests) {
        const callPart = assistant.content.find((p) => p.type === 'tool-call' && p.toolCallId === request.toolCall.toolCallId)
        const requestPart = assistant.content.find((p) => p.type === 'tool-approval-request' && p.approvalId === request.approvalId)
        const view = new ApprovalView(callPart, requestPart, agent)
        let answer
        try {
          answer = await approve(view)
        } catch (e) {
          if (e instanceof ScriptError) throw e
          stop = `the approval service raised (${describeError(e)}): no tool-approval-response can say so; the host does not resume`
          continue
        }
        const mapped = typeof answer === 'string' && Object.hasOwn(APPROVAL_ANSWERS, answer) ? APPROVAL_ANSWERS[answer] : undefined
        if (mapped === undefined) {
          stop = `the approval answer ${JSON.stringify(jsonable(answer))} has no tool-approval-response counterpart; the host does not resume`
          continue
        }
        responses.push({ type: 'tool-approval-response', approvalId: requestPart.approvalId, ...mapped })
      }
      if (stop === undefined) {
        phase.resumed = true
        ended = undefined
        const resumed = await generateText({ ...options, messages: [...prompt, ...history, { role: 'tool', content: responses }] })
        runs.push(resumed)
        for (const part of ended?.responseMessages?.[0]?.role === 'tool' ? ended.responseMessages[0].content : []) {
          answers.set(part.toolCallId, { result: settledOf(part) })
        }
      } else {
        for (const request of requests) answers.set(request.toolCall.toolCallId, { interrupted: stop })
      }
    }

    // Every other call's outcome is in the first run's steps: a tool-result / tool-error part
    // (executed, or invalid: dist:6093-6101), or an automatic denial (approval-response part).
    for (const run of runs) {
      for (const step of run.steps) {
        const invalid = new Map(step.toolCalls.filter((c) => c.invalid).map((c) => [c.toolCallId, c.error]))
        for (const part of step.content) {
          if (answers.has(part.toolCallId ?? part.toolCall?.toolCallId)) continue
          if (part.type === 'tool-result' || part.type === 'tool-error') {
            const cause = invalid.get(part.toolCallId)
            if (cause !== undefined && NoSuchToolError.isInstance(cause)) binding.info.set(part, { name: cause.name, code: 'UNKNOWN_TOOL' })
            if (cause !== undefined && InvalidToolInputError.isInstance(cause)) binding.info.set(part, { name: cause.name, code: 'INVALID_ARGS' })
            answers.set(part.toolCallId, { result: part })
          } else if (part.type === 'tool-approval-response' && part.approved === false) {
            answers.set(part.toolCall.toolCallId, { result: denied(part.reason) })
          }
        }
      }
    }
    return inputs.map(({ call }) => {
      const answer = answers.get(call.callId)
      if (answer === undefined) return { interrupted: `generateText returned no outcome for call ${call.callId}` }
      return 'result' in answer ? { result: binding.resultJson(answer.result) } : answer
    })
  }

  const actions = []
  for (const action of scenario.actions ?? []) {
    try {
      if ('call' in action) {
        const [answer] = await withinDeadline(turn([action.call]))
        actions.push(answer)
      } else if ('batch' in action) {
        const answers = await withinDeadline(turn(action.batch, action.maxParallel))
        actions.push({ results: answers.map((a) => ('result' in a ? a.result : a)) })
      } else if ('schemas' in action) {
        actions.push(await schemasAnswer(action, common))
      } else if ('executionMode' in action) {
        // Every call of a step runs concurrently (executeTools / mapWithConcurrency, dist:6322, 5465).
        actions.push({ mode: 'parallel' })
      } else {
        throw new Inexpressible(`action ${JSON.stringify(Object.keys(action))}: ${MISSING['registry-mutation']}`)
      }
    } catch (e) {
      if (e instanceof ScriptError || e instanceof Inexpressible) throw e
      if (e instanceof DeadlineExceeded) actions.push({ raised: `deadline of ${ACTION_DEADLINE_MS / 1000} s exceeded` })
      else actions.push({ raised: describeError(e) })
    }
  }
  await new Promise((resolve) => setImmediate(resolve))
  if (session.scriptErrors.length > 0) throw session.scriptErrors[0]
  return {
    registrations: specs.map((s) => ({ key: s.key ?? s.name, ok: true })),
    actions,
    events: session.events.slice(),
    notes: [`approval signing (experimental_toolApprovalSecret): ${APPROVAL_SECRET ? 'on' : 'off'}`],
  }
}

/** A denial: the SDK's approval-response part (approved: false, reason?), dist:6075-6090. */
function denied(reason) {
  const message = reason ?? 'execution denied'
  return new Settled({ isError: true, error: { message }, content: [{ type: 'text', text: message }] })
}

/** A resumed call's result as the SDK returns it: a tool message's tool-result part (dist:5710-5752). */
function settledOf(part) {
  const output = part.output ?? {}
  switch (output.type) {
    case 'text':
    case 'json':
      return new Settled({ isError: false, value: jsonable(output.value), content: [{ type: 'text', text: textOf(output.value) }] })
    case 'error-text':
    case 'error-json': {
      const message = textOf(output.value)
      return new Settled({ isError: true, error: { message }, content: [{ type: 'text', text: message }] })
    }
    case 'execution-denied':
      return denied(output.reason)
    default:
      return new Settled(jsonable(part))
  }
}

/**
 * `schemas`: the tool list the mock model actually receives (LanguageModelV4 call options
 * `tools`, built by prepareTools, dist:2131), one entry per wire tool: name, description,
 * parameters (= inputSchema), and any other wire field verbatim (no `type`, the provider's
 * discriminator). Nothing is copied: what the model got is what is answered and mutated.
 */
async function schemasAnswer(action, common) {
  const scope = action.schemas?.scope ?? null
  const list = async () => {
    let seen = []
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        seen = options.tools ?? []
        return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] }
      },
    })
    const options = common(scope, undefined, { resumed: false }, undefined)
    await generateText({ ...options, model, prompt: 'toolreg schemas' })
    return seen.map(({ type, name, description, inputSchema, ...rest }) => ({
      name,
      ...(description !== undefined ? { description } : {}),
      parameters: inputSchema,
      ...rest,
    }))
  }
  const listed = await list()
  const answer = { schemas: jsonable(listed) }
  if ('mutate' in action) {
    attemptWrite(listed, action.mutate) // `after` shows whether it took
    answer.after = jsonable(await list())
  }
  return answer
}
