// The scenario language on the Vercel AI SDK (npm `ai`), driven by the SDK's own mock model.
//
// Every `call` action is one generateText() whose MockLanguageModelV4 answers its first
// request with one tool-call part per call of the action (a `batch` is several in one model
// turn) and every later request (the prompt ends with the tool results) with the text
// "done". An `ask` is a tool-approval-request: the host (this harness) hands it to the
// scenario's approval script and, when every answer has an SDK counterpart, calls
// generateText again with the history plus the tool-approval-response parts. No network.
//
// The harness maps; it never judges, never fixes what the SDK does and builds no mechanism
// the SDK lacks. `dist:N` = node_modules/ai/dist/index.js line N, `d.ts:N` = its
// index.d.ts, `pu:N` = node_modules/@ai-sdk/provider-utils/dist/index.js, all of the pinned
// versions (ai 7.0.173, provider-utils 5.0.81). Every declared stage and its SDK API:
//
// - pre-execute -> the `toolApproval` function of generateText (d.ts:4087), called by
//   resolveToolApproval (dist:4123-4131) for every parsed call of a step (dist:6030) and
//   again, on the resumed run, for every call the approver approved
//   (validateApprovedToolApprovals, dist:5416-5423, on a shallow copy of the history's tool
//   call, dist:5351-5360). The SDK has ONE such function per run: a scenario with more than
//   one pre-execute listener for a run's agent is skipped (no kit-side chain). The
//   listener's decision is said in the SDK's status vocabulary (ToolApprovalStatus,
//   d.ts:3530-3556; `approvalStatus` below): allow -> {type: 'not-applicable'}, deny ->
//   {type: 'denied', reason}, ask -> {type: 'user-approval', reason}, any other kind kept
//   as the status type, any other value handed over as it is (what a policy written
//   against the SDK with that mistake returns); `next()` is the end of a one-listener
//   chain, the SDK's default for a call nobody objects to (not-applicable: it runs).
// - approval -> the tool-approval-request parts of the first run (not isAutomatic,
//   dist:6047-6057) and a second generateText with the history plus tool-approval-response
//   parts (collectToolApprovals, dist:2510).
// - observers -> the SDK's notification of each call's outcome: an executed call's
//   onToolExecutionEnd (executeToolCall, dist:3052-3096; in a step and on resume,
//   dist:5702), a call that did not run (an invalid call's tool-error part, an automatic
//   denial's tool-approval-response part) its part in the step content of onStepEnd
//   (dist:6212-6215, content built at dist:2619-2728). A call denied on the resumed run
//   (approved: false, or `denied` when the policy is asked again) is written into the
//   run's response messages only (dist:5739-5752): no callback tells of it, so no
//   observer is told.
// - scopes -> activeTools (filterActiveTools, dist:3101) and one run per agent: the host
//   configures each agent's generateText with that agent's listeners and observers.
// - scheduler -> several tool-call parts in one model turn; maxParallel ->
//   toolCallConcurrency (mapWithConcurrency, dist:5465).
// - timeout-policy -> timeout.tools[<name>Ms] (getToolTimeoutMs, dist:2234).
//
// README.md has the mapping table, the missing capabilities and the closed forms.

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

import { generateText, InvalidToolInputError, isStepCount, jsonSchema, NoSuchToolError, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

import {
  batchResults,
  Binding,
  decode,
  describeError,
  errorResult,
  Inexpressible,
  jsonable,
  modelEntry,
  runActions,
  ScriptError,
  Session,
  settle,
  successResult,
  textOf,
  unexpressed,
  wireText,
  writesAsCaller,
} from '@toolreg/interpreter'

const require = createRequire(import.meta.url)
const UPSTREAM = JSON.parse(readFileSync(require.resolve('ai/package.json'), 'utf8'))

export const IMPLEMENTATION = { name: UPSTREAM.name, version: UPSTREAM.version, language: 'typescript' }

/**
 * Signing of approval requests (`experimental_toolApprovalSecret`, dist:4097 of index.d.ts):
 * off by default (the SDK's default); TOOLREG_VERCEL_APPROVAL_SECRET=<secret> turns it on.
 */
const APPROVAL_SECRET = process.env.TOOLREG_VERCEL_APPROVAL_SECRET || undefined

export const CAPABILITIES = ['pre-execute', 'observers', 'approval', 'scopes', 'scheduler', 'timeout-policy']

export const MISSING = {
  guards:
    'no stage after the approval that can deny a call: toolApproval (resolveToolApproval, dist:4123) is the only policy ' +
    'hook, asked before the approval and again, on resume, for each approved call (dist:5416); onToolExecutionStart runs ' +
    'before execute but cannot stop it (notify swallows its throw, dist:2397-2402)',
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

/**
 * A live parsed tool call under the kit's names, with the context that holds its agent. The
 * toolApproval function is handed it with the run's runtimeContext; an observer, as the call,
 * the tool call the SDK's notification carries (onToolExecutionEnd's event.toolCall,
 * dist:3073, 3089; a step's tool-call part, or a denial part's toolCall, dist:2646-2650,
 * 6059-6090) with that tool's context (event.toolContext; the step's toolsContext entry).
 */
class CallView {
  constructor(toolCall, context) {
    this.toolCall = toolCall
    this.context = context
  }
  get callId() { return this.toolCall.toolCallId }
  set callId(v) { this.toolCall.toolCallId = v }
  get name() { return this.toolCall.toolName }
  set name(v) { this.toolCall.toolName = v }
  get arguments() { return this.toolCall.input }
  set arguments(v) { this.toolCall.input = v }
  get agent() { return this.context?.agent ?? null }
  set agent(v) { if (this.context) this.context.agent = v }
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

// --------------------------------------------------------------------------- binding

export class VercelBinding extends Binding {
  constructor() {
    super()
    /** error.info for a tool-error part whose cause the SDK names unambiguously. */
    this.info = new WeakMap()
  }

  /** An invalid call's tool-error part and its cause (parseToolCall, dist:3923-4000). */
  noteCause(part, cause) {
    if (NoSuchToolError.isInstance(cause)) this.info.set(part, { name: cause.name, code: 'UNKNOWN_TOOL' })
    else if (InvalidToolInputError.isInstance(cause)) this.info.set(part, { name: cause.name, code: 'INVALID_ARGS' })
  }

  keys(obj) {
    if (obj instanceof ApprovalView) {
      return ['approvalId', 'callId', 'name', 'arguments', ...(obj.requestPart.reason != null ? ['reason'] : [])]
    }
    return super.keys(obj)
  }

  // A live tool output (tool-result / tool-error part, dist:3072-3096) read and written under
  // the kit's result names: `value` and `content` are its `output` (what the model sees is
  // rendered from it), `isError` its `type`, `error` its `error`. A denial (a
  // tool-approval-response part, dist:6075-6090) has no output: `isError` is `approved`
  // negated.
  read(obj, key) {
    if (isApprovalResponse(obj)) {
      if (key === 'value' || key === 'content') throw new TypeError(`a tool-approval-response has no ${key}`)
      if (key === 'isError') return obj.approved === false
    }
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
    if (isApprovalResponse(obj) && key === 'isError') return void (obj.approved = !value)
    if (isToolOutput(obj)) {
      if (key === 'value' || key === 'content') return void (obj.output = value)
      if (key === 'isError') return void (obj.type = value ? 'tool-error' : 'tool-result')
    }
    if (obj instanceof Settled) return super.write(obj.json, key, value)
    return super.write(obj, key, value)
  }

  resultJson(result) {
    if (result instanceof Settled) return result.json
    if (isApprovalResponse(result)) {
      if (result.approved !== false) return jsonable({ type: result.type, approvalId: result.approvalId, approved: result.approved })
      return denialJson(result.reason)
    }
    if (isToolOutput(result)) {
      if (result.type === 'tool-result') return successResult(result.output, textOf(result.output))
      return errorResult(errorMessage(result.error), this.info.get(result))
    }
    return jsonable(result)
  }
}

/** A tool-approval-response part of a step's content (an automatic approval or denial). */
function isApprovalResponse(obj) {
  return obj !== null && typeof obj === 'object' && obj.type === 'tool-approval-response' && 'approvalId' in obj && 'toolCall' in obj
}

function isToolOutput(obj) {
  return obj !== null && typeof obj === 'object' && (obj.type === 'tool-result' || obj.type === 'tool-error') && 'toolCallId' in obj && 'input' in obj
}

// --------------------------------------------------------------------------- helpers

const USAGE = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
}

/** The kit's decision kinds in the SDK's approval vocabulary (ToolApprovalStatus, d.ts:3544-3556). */
const STATUS_OF_KIND = { allow: 'not-applicable', deny: 'denied', ask: 'user-approval' }

/**
 * A pre-execute decision as a toolApproval function written against the SDK returns it:
 * an object with a kind becomes the status object of that kind (an unknown kind stays the
 * status type, every other key is kept: a deny's reason, an ask's reason); any other value
 * (nothing, a string, a number, an object without a kind) is what such a policy returns,
 * handed over as it is (normalizeToolApprovalStatus, dist:4156-4158).
 */
function approvalStatus(decision) {
  if (decision === null || typeof decision !== 'object' || Array.isArray(decision) || typeof decision.kind !== 'string') return decision
  const { kind, ...rest } = decision
  return { type: Object.hasOwn(STATUS_OF_KIND, kind) ? STATUS_OF_KIND[kind] : kind, ...rest }
}

/** The end of a one-listener chain: nobody objects, the SDK's default (not-applicable: it runs). */
const END_OF_CHAIN = () => ({ kind: 'allow' })

// --------------------------------------------------------------------------- the run

/** Why a scenario whose caller writes to its own objects is skipped (README, The adapter doctor). */
const CALLER_WRITES =
  "the caller's afterInvoke/afterResult writes: the caller is the SDK's own loop, reading the " +
  'mock model\'s tool-call parts; this harness has no caller-side object to write after invoking'

/**
 * Run one scenario on the SDK and return its trace (trace.schema.json).
 * Throws Inexpressible (skipped) or ScriptError (errored).
 */
export async function runScenario(scenario) {
  const why = unexpressed(scenario, MISSING) ?? (writesAsCaller(scenario) ? CALLER_WRITES : undefined)
  if (why !== undefined) throw new Inexpressible(why)
  const binding = new VercelBinding()
  const session = new Session(scenario, binding)
  const specs = scenario.tools ?? []
  const visible = (scope, agent) => scope === undefined || scope === null || scope === agent
  const pre = (scenario.preExecute ?? []).map((s) => ({ scope: s.scope, run: session.preListener(s) }))
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
  const common = (agent, signal, maxParallel) => {
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
    const listeners = pre.filter((p) => visible(p.scope, agent))
    if (listeners.length > 1) {
      throw new Inexpressible(
        `${listeners.length} pre-execute listeners for one run: the SDK has one toolApproval function per generateText ` +
          '(resolveToolApproval, dist:4123) and no chain of them',
      )
    }
    if (listeners.length === 1) {
      // Every time the SDK asks, the listener decides: in the step (dist:6030) and, on the
      // resumed run, again for each approved call (dist:5416).
      const [listener] = listeners
      options.toolApproval = async ({ toolCall, runtimeContext }) =>
        approvalStatus(await listener.run(new CallView(toolCall, runtimeContext), END_OF_CHAIN))
    }
    const watching = observers.filter((o) => visible(o.scope, agent))
    // Several observers of one notification run the way notify() runs callbacks:
    // concurrently, each one's throw contained (dist:2397-2402).
    const tell = (view, result) =>
      Promise.all(
        watching.map(async (o) => {
          try {
            await o.run(view, result)
          } catch (e) {
            if (e instanceof ScriptError) throw e
          }
        }),
      )
    if (watching.length > 0) {
      // An executed call: onToolExecutionEnd with its live output (dist:3052-3096).
      options.onToolExecutionEnd = (event) => tell(new CallView(event.toolCall, event.toolContext), event.toolOutput)
    }
    // A call that did not run: its part in the step content (dist:2619-2728, 6096-6104). The
    // error code of an invalid call is read off its cause here, before anyone sees the part.
    options.onStepEnd = async (step) => {
      const invalid = new Map(step.toolCalls.filter((c) => c.invalid).map((c) => [c.toolCallId, c.error]))
      for (const part of step.content) {
        if (part.type === 'tool-error' && invalid.has(part.toolCallId)) binding.noteCause(part, invalid.get(part.toolCallId))
        const id = part.type === 'tool-approval-response' ? part.toolCall.toolCallId : part.toolCallId
        const told = (part.type === 'tool-error' && invalid.has(id)) || (part.type === 'tool-approval-response' && part.approved === false)
        if (!told || watching.length === 0) continue
        const toolCall = part.toolCall ?? step.toolCalls.find((c) => c.toolCallId === id)
        await tell(new CallView(toolCall, step.toolsContext?.[toolCall.toolName] ?? step.runtimeContext), part)
      }
    }
    return options
  }

  /** One model turn with the given calls; the answers in call order. */
  const turn = async (calls, maxParallel) => {
    const agent = calls[0]?.agent ?? null
    const inputs = calls.map((call) => {
      const { controller, arguments: args } = session.caller(call)
      const own = call.withoutSignal ? {} : { signal: controller.signal }
      session.trackCaller(call.callId, { callId: call.callId, name: call.name, arguments: args, ...own })
      return { call, controller, text: wireText(args) }
    })
    // a caller that supplies no signal (withoutSignal, CANCEL-1) hands generateText none
    const signals = inputs.filter((i) => !i.call.withoutSignal).map((i) => binding.controllerSignal(i.controller))
    const signal = signals.length > 0 ? AbortSignal.any(signals) : undefined
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
    const prompt = [{ role: 'user', content: 'toolreg scenario turn' }]
    let ended
    const options = { ...common(agent, signal, maxParallel), model, onEnd: (event) => void (ended = event) }
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
        for (const part of step.content) {
          if (answers.has(part.toolCallId ?? part.toolCall?.toolCallId)) continue
          if (part.type === 'tool-result' || part.type === 'tool-error') {
            answers.set(part.toolCallId, { result: part })
          } else if (part.type === 'tool-approval-response' && part.approved === false) {
            answers.set(part.toolCall.toolCallId, { result: part })
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

  const actions = await runActions(scenario, {
    call: async (call) => (await turn([call]))[0],
    batch: async (calls, maxParallel) => batchResults(await turn(calls, maxParallel)),
    schemas: (scope) => listSchemas(scope ?? null, common),
    // Every call of a step runs concurrently (executeTools / mapWithConcurrency, dist:6322, 5465).
    executionMode: () => 'parallel',
    unsupported: (action) => {
      throw new Inexpressible(`action ${JSON.stringify(Object.keys(action))}: ${MISSING['registry-mutation']}`)
    },
  })
  await settle(session)
  return {
    registrations: specs.map((s) => ({ key: s.key ?? s.name, ok: true })),
    actions,
    events: session.events.slice(),
    notes: [`approval signing (experimental_toolApprovalSecret): ${APPROVAL_SECRET ? 'on' : 'off'}`],
  }
}

/** A denial's result: the reason of an approval-response part (approved: false, dist:6075-6090)
 * or of an execution-denied output (dist:5739-5748). */
function denialJson(reason) {
  return errorResult(reason ?? 'execution denied')
}

/** A resumed call's result as the SDK returns it: a tool message's tool-result part (dist:5710-5752). */
function settledOf(part) {
  const output = part.output ?? {}
  switch (output.type) {
    case 'text':
    case 'json':
      return new Settled(successResult(output.value, textOf(output.value)))
    case 'error-text':
    case 'error-json':
      return new Settled(errorResult(textOf(output.value)))
    case 'execution-denied':
      return new Settled(denialJson(output.reason))
    default:
      return new Settled(jsonable(part))
  }
}

/**
 * `schemas`: the tool list the mock model actually receives (LanguageModelV4 call options
 * `tools`, built by prepareTools, dist:2131-2175), each entry through the kit's one wire
 * projection (`modelEntry`: inputSchema -> parameters, the envelope type: 'function' and a
 * boolean strict dropped, every other field kept). Nothing is copied: the values are the
 * SDK's own objects, so a write goes into what the SDK sends next (a new request shows it).
 */
async function listSchemas(scope, common) {
  let seen = []
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      seen = options.tools ?? []
      return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] }
    },
  })
  const options = common(scope, undefined, undefined)
  await generateText({ ...options, model, prompt: 'toolreg schemas' })
  return seen.map((entry) => modelEntry(entry, { inputSchema: 'parameters' }))
}
