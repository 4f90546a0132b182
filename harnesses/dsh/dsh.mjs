// The scenario language on the real @deepseek-ai/dsh-tools registry.
//
// This file is conformance/adapters/reference.py with the API calls swapped: it
// builds the set-up from @toolreg/interpreter's Session factories (which interpret every
// scripted step and record every event), maps them onto the upstream API (a
// fresh Cordis context per scenario with ToolRuntime and its SystemPrompt,
// agent scopes from dsh-scope, a stand-in approval service, the timeout policy
// plugin, a scripted code runtime), and runs the scenario's actions in order.
// It never judges anything, and it never fixes what upstream does: it maps.

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { format } from 'node:util'

import { Context, Service } from '@deepseek-ai/cordis'
import { CodeRuntime } from '@deepseek-ai/dsh-code-runtime'
import { createScope } from '@deepseek-ai/dsh-scope'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import { ToolRuntime } from '@deepseek-ai/dsh-tools'

import {
  Binding, deadline, decode, describeError, Inexpressible, jsonable, runActions as sharedRunActions, runProgram, ScriptError, Session, settle,
} from '@toolreg/interpreter'

import { ROOT } from './upstream.mjs'

const require = createRequire(join(ROOT, 'package.json'))
const UPSTREAM = JSON.parse(readFileSync(require.resolve('@deepseek-ai/dsh-tools/package.json'), 'utf8'))


/** Who answers the `start` request. */
export const IMPLEMENTATION = { name: UPSTREAM.name, version: UPSTREAM.version, language: 'typescript' }

/**
 * The tool-call timeout policy is a separate package, first released for 0.1.0 at rc.8
 * (npm has 0.0.1-rc.3, which peers on dsh-tools 0.0.x, and 0.1.0-rc.8): a release without
 * it cannot express the `timeout-policy` capability. Only its absence is tolerated.
 */
const TimeoutPolicy = await import('@deepseek-ai/dsh-tool-call-timeout-policy').catch((e) => {
  if (e?.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('dsh-tool-call-timeout-policy')) return null
  throw e
})

/**
 * The kit's optional capabilities this harness declares, each mapped onto dsh-tools' own
 * mechanism (README.md, "Mapping"; line numbers are lib/index.js of 0.1.0-rc.8, rc.7's is
 * the same file, rc.6's is 7 lines shorter from line 1294 on):
 *
 * - pre-execute: the Cordis waterfall `tools/pre-execute` (`this.ctx.waterfall(carrier,
 *   "tools/pre-execute", exec, ...)`, :3105); decisions are handed to it as the scenario
 *   writes them (dsh-tools' PreToolDecision is the spec's vocabulary), malformed ones too.
 * - guards: `ctx.tools.guard(guard)` (consulted by `guardReason`, :2536 and :3116).
 * - wrappers: the Cordis waterfall `tools/execute` (:3202); `replaceSignal` assigns the
 *   ToolDispatchExecution's `signal`, as upstream's types allow a wrapper to.
 * - post-execute: the Cordis waterfall `tools/post-execute` (`postExecute`, :3367).
 * - finalizer: the definition's `finalizeContent` (`applyFinalContent`, :3263).
 * - observers: the `tools/result` emit (`notifyResult`, :3273), upstream's one per-result
 *   notification, fired for every published result (denials included).
 * - classifier: `ctx.tools.executionMode(input)` (:2940) over the definition's
 *   `isConcurrencySafe`.
 * - agentless-calls, scopes: `ctx.tools.execute(input)` with or without `agent`; an agent
 *   scope is `createScope(ctx, agent)` of `@deepseek-ai/dsh-scope`.
 * - approval: the seam dsh-tools reads with `ctx.get('approval')` (`serviceAsk`, :3303),
 *   filled by a scripted Service named `approval` (the answers are the scenario's).
 * - code-mode: ToolRuntime's `mode` config and the `ctx.codeRuntime` seam (a scripted
 *   CodeRuntime); the bridge, the SDK bindings and `tools/code-dispatch-log` are upstream's.
 * - nested-calls: a composite body calls `ctx.tools.execute({..., parent: exec.token})`
 *   and forwards the nested result as ToolRunContext documents it.
 * - presentation, registry-mutation: the definition's presenters; `register()` and its
 *   disposer, `schemas()`.
 * - timeout-policy: the `@deepseek-ai/dsh-tool-call-timeout-policy` plugin.
 * - listener-disposers: the disposers upstream returns. `ctx.on(event, listener)` (Cordis)
 *   returns its fiber effect's disposer, which unregisters exactly that hook (each
 *   registration is its own `reflect.bind` proxy of the listener, and a spent effect
 *   disposer does nothing); `ctx.tools.guard(guard)` returns "the exact disposer that
 *   unregisters the guard" (lib/types/index.d.ts:620; dsh-scope's AnonymousEntries.append,
 *   "an idempotent undo for this exact append"); the timeout policy's is its plugin fiber's
 *   `dispose()`. A second registration registers the very same callable again (`made`).
 *
 * Not declared (see MISSING): `scheduler`, and `timeout-policy` for a release without it.
 */
export const CAPABILITIES = [
  'pre-execute',
  'guards',
  'wrappers',
  'post-execute',
  'finalizer',
  'observers',
  'classifier',
  'agentless-calls',
  'approval',
  'code-mode',
  'nested-calls',
  'presentation',
  'registry-mutation',
  'scopes',
  ...(TimeoutPolicy ? ['timeout-policy'] : []),
  'listener-disposers',
]

/**
 * dsh-tools has no batch driver: the one upstream ships is `executeToolCalls` of
 * `@deepseek-ai/dsh-agent-loop`, which that package does not export (its entry exports
 * the AgentLoop service only) and which runs only inside a full agent loop (an LLM
 * runtime, a session store). A driver written here would be the harness's scheduling,
 * not upstream's, so batches are not run.
 */
const NO_SCHEDULER =
  'dsh-tools has no batch driver of its own: the agent loop\'s (executeToolCalls of ' +
  '@deepseek-ai/dsh-agent-loop) is not exported, and one written in the harness would judge ' +
  "the harness's scheduling, not upstream's"

/** Capabilities this harness cannot express, with the reason. */
export const MISSING = {
  scheduler: NO_SCHEDULER,
  ...(TimeoutPolicy
    ? {}
    : {
        'timeout-policy':
          `@deepseek-ai/dsh-tool-call-timeout-policy has no release for dsh-tools ${UPSTREAM.version} ` +
          '(npm: 0.0.1-rc.3 for dsh-tools 0.0.x, then 0.1.0-rc.8, which peers on dsh-tools ^0.1.0-rc.8)',
      }),
}

/** How long the set-up may take before the harness gives up (a harness failure, not a trace). */
const SETUP_DEADLINE_MS = 5000

/**
 * A dsh-tools ToolDefinition (camelCase keys) from a scenario tool spec. Raw
 * registration through `ctx.tools.register()`: `parameters` is the scenario's
 * JSON Schema, as the spec's definition carries it (see README.md, PIPE-4).
 * @param {Session} session
 * @param {object} spec
 */
export function buildDefinition(session, spec) {
  const definition = { name: spec.name, execute: session.toolBody(spec) }
  if ('description' in spec) definition.description = spec.description
  if ('parameters' in spec) definition.parameters = spec.parameters
  if ('output' in spec) {
    const out = spec.output
    const output = {}
    if ('schema' in out) output.schema = out.schema
    if ('render' in out) output.render = session.projection(out.render, { content: true })
    if ('presentationMeta' in out) output.presentationMeta = session.projection(out.presentationMeta, { content: false })
    definition.output = output
  }
  if ('finalizeContent' in spec) definition.finalizeContent = session.finalizer(spec)
  if ('isConcurrencySafe' in spec) definition.isConcurrencySafe = session.classifier(spec)
  if ('timeoutMs' in spec) definition.timeoutMs = decode(spec.timeoutMs)
  if ('presentCall' in spec) definition.presentCall = session.projection(spec.presentCall, { content: false })
  if ('presentResult' in spec) definition.presentResult = session.projection(spec.presentResult, { content: false })
  Object.assign(definition, spec.extra ?? {})
  return definition
}

/**
 * The kit's run_code program runtime (@toolreg/interpreter's runProgram, the
 * twin of conformance/interpreter/code_runtime.py) as a dsh-tools CodeRuntime: `call`
 * is a binding of the `tools` namespace (a rejection becomes an outcome named
 * by the namespace's error member property), and a failed run is a result
 * field (`error: {kind, message}`), per the CodeRuntime contract.
 */
class ScriptedCodeRuntime extends CodeRuntime {
  /** dsh-tools gates Code Mode on an SDK renderer for the runtime's language. */
  language = 'typescript'
  isolation = 'in-process'

  async run(request) {
    const logs = []
    const namespace = request.bindings.find((b) => b.global === 'tools')
    const functions = namespace?.functions ?? {}
    const memberProperty = namespace?.errorClass?.memberNameProperty ?? 'toolName'
    const ran = await runProgram(request.program, {
      call(name, args) {
        const binding = functions[name]
        if (typeof binding !== 'function') throw new TypeError(`tools.${name} is not a function`)
        return binding(args)
      },
      log: (line) => logs.push(line),
      callError: (name, e) => ({ [memberProperty]: name, message: e?.message ?? String(e) }),
    })
    if ('failed' in ran) return { logs, error: { kind: 'exception', message: ran.failed } }
    return { value: ran.value, logs }
  }
}

/**
 * The interpreter's default Binding, with what dsh-tools shapes its own way: a
 * code-dispatch-log record names its call `subCallId` and its parent execution
 * `exec`; a post-execute block's feedback is ContentBlock[].
 */
export class DshBinding extends Binding {
  callId(execution) {
    return this.get(execution, 'callId') ?? this.get(execution, 'subCallId') ?? null
  }
  hasParent(execution) {
    // An execution names its parent token; a code-dispatch-log record names its parent execution.
    return this.get(execution, 'parent') !== undefined || this.get(execution, 'exec') !== undefined
  }
  /**
   * dsh-tools has no forward() on the run context: a composite tool forwards a nested result
   * itself, as upstream documents it (ToolRunContext.deferContext / concludeTurn): each of
   * its additionalContexts is deferred, and an authoritative success's concludesTurn
   * concludes the outer run.
   */
  forward(ctx, result) {
    for (const context of result?.additionalContexts ?? []) ctx.deferContext(context)
    if (result?.isError === false && result.concludesTurn === true) ctx.concludeTurn()
  }
  postDecision(data) {
    const decision = super.postDecision(data)
    // Upstream block feedback is ContentBlock[]; the spec's block(feedback) with a
    // string feedback means one text block.
    if (decision && decision.kind === 'block' && typeof decision.feedback === 'string') {
      return { ...decision, feedback: [{ type: 'text', text: decision.feedback }] }
    }
    return decision
  }
}

/** The approval seam dsh-tools reads with `ctx.get('approval')`: a Service named `approval`. */
function approvalService(request) {
  return class ScriptedApproval extends Service {
    constructor(ctx) {
      super(ctx, 'approval')
    }

    request(req) {
      return request(req)
    }
  }
}

function logToStderr(message) {
  process.stderr.write(`dsh-tools ${message.type} [${message.name}] ${format(...message.args)}\n`)
}

/** A fresh Cordis world for one scenario: ToolRuntime, its SystemPrompt, and the optional seams. */
async function boot(scenario, session) {
  const mode = scenario.registry?.mode ?? 'native'
  const root = new Context()
  // Upstream's own warnings (a failed observer, a failed dispatch-log listener...) go to
  // stderr, where the kit keeps them as evidence; Cordis has no console exporter by default.
  root.logger.exporter({ levels: { default: 2 }, export: logToStderr })
  root.plugin(SystemPrompt)
  root.plugin(ToolRuntime, { mode })
  const needs = ['tools']
  if (mode !== 'native') {
    root.plugin(ScriptedCodeRuntime)
    needs.push('codeRuntime')
  }
  if (scenario.approval !== undefined) {
    root.plugin(approvalService(session.approvalRequest(scenario.approval)))
    needs.push('approval')
  }
  // Awaiting plugin() does not mean a service is ready: wait until all are injected.
  const timer = deadline(SETUP_DEADLINE_MS, `services ${needs.join(', ')} not ready`)
  try {
    const ctx = await Promise.race([
      new Promise((resolve) => {
        root.inject(needs, (ctx) => {
          resolve(ctx)
        })
      }),
      timer.promise,
    ])
    let policy
    if (scenario.timeoutPolicy) {
      // Plugged before any scenario wrapper, so it is the outermost tools/execute listener.
      policy = ctx.plugin(TimeoutPolicy)
      await Promise.race([policy, timer.promise])
    }
    return { root, ctx, policy }
  } finally {
    timer.clear()
  }
}

/**
 * Run one scenario on dsh-tools and return its trace (trace.schema.json).
 * Throws a ScriptError when the scenario cannot be interpreted (the run is `errored`).
 * @param {object} scenario
 */
export async function runScenario(scenario) {
  const session = new Session(scenario, new DshBinding())
  const log = []
  const agents = new Map()
  /** The stand-in for an upstream Agent: a scope key with the session the Code Mode bridge logs to. */
  const agentFor = (id) => {
    if (id === undefined || id === null) return undefined
    let agent = agents.get(id)
    if (agent === undefined) {
      agent = {
        id,
        session: {
          append(type, data) {
            if (type !== 'tool/code-dispatch') return
            log.push({
              type,
              id: data.subCallId,
              parentCallId: data.parentCallId,
              name: data.name,
              isError: data.isError,
              content: jsonable(data.content),
            })
          },
        },
      }
      agents.set(id, agent)
    }
    return agent
  }

  const { root, ctx, policy } = await boot(scenario, session)
  try {
    const scopes = new Map()
    /** The registering context: global, or the agent's scope minted from the injected context. */
    const contextFor = (id) => {
      if (id === undefined || id === null) return ctx
      let scope = scopes.get(id)
      if (scope === undefined) {
        scope = createScope(ctx, agentFor(id))
        scopes.set(id, scope)
      }
      return scope.ctx
    }

    const specs = new Map()
    for (const tool of scenario.tools ?? []) specs.set(tool.key ?? tool.name, tool)
    const disposers = new Map()
    const spent = new Map() // the disposer each key ran last (a `dispose` action with `again`)
    const definitions = new Map() // a re-registration registers the same definition object
    const registrations = []

    const register = (key) => {
      const spec = specs.get(key)
      if (spec === undefined) throw new ScriptError(`no scenario tool with key ${JSON.stringify(key)}`)
      try {
        if (!definitions.has(key)) definitions.set(key, buildDefinition(session, spec))
        disposers.set(key, contextFor(spec.scope).tools.register(definitions.get(key)))
      } catch (e) {
        if (e instanceof ScriptError) throw e
        return { key, ok: false, error: describeError(e) }
      }
      return { key, ok: true }
    }
    const dispose = (key, again = false) => {
      if (again) {
        spent.get(key)?.()
        return
      }
      const disposer = disposers.get(key)
      if (disposer !== undefined) {
        disposers.delete(key)
        spent.set(key, disposer)
        disposer()
      }
    }
    session.registerHook = (key) => {
      registrations.push(register(key))
    }
    session.disposeHook = dispose
    // A composite tool's nested call: under the body's signal and agent, its parent the body's token.
    session.nestedCall = (runCtx, callId, name, args) =>
      ctx.tools.execute({
        callId,
        name,
        arguments: args,
        signal: runCtx.signal,
        parent: runCtx.token,
        ...(runCtx.agent !== undefined ? { agent: runCtx.agent } : {}),
      })

    for (const [key, spec] of specs) {
      if (spec.registered ?? true) registrations.push(register(key))
    }
    const listeners = new Listeners(session, contextFor, ctx, policy)
    for (const kind of Object.keys(LISTENER_KINDS)) {
      for (const spec of scenario[kind] ?? []) {
        if (spec.registered ?? true) await listeners.register(kind, spec.id)
      }
    }

    const callInput = (call) => {
      const { controller, arguments: args } = session.caller(call)
      const agent = agentFor(call.agent)
      return session.trackCaller(call.callId, {
        callId: call.callId,
        name: call.name,
        arguments: args,
        ...(call.withoutSignal ? {} : { signal: controller.signal }),
        ...(agent !== undefined ? { agent } : {}),
      })
    }

    const actions = await runActions(scenario, {
      call: async (call) => ({ result: session.binding.resultJson(await ctx.tools.execute(callInput(call))) }),
      schemas: (scope) => ctx.tools.schemas(agentFor(scope)),
      executionMode: (call) => ctx.tools.executionMode(callInput(call)).kind,
      register: (key) => {
        const outcome = register(key)
        registrations.push(outcome)
        return outcome
      },
      dispose,
      callerWrites: (call, moment) => session.callerWrites(call, moment),
      registerListener: (kind, id) => listeners.register(kind, id),
      disposeListener: (kind, id, again) => listeners.dispose(kind, id, again),
    })
    // Observers are notified without being awaited upstream: settle lets the synchronous
    // tails of the last notification land before the snapshot.
    await settle(session)
    return {
      registrations,
      actions,
      events: session.events.slice(),
      log: log.slice(),
    }
  } finally {
    Promise.resolve()
      .then(() => root.fiber.dispose())
      .catch(() => {})
  }
}

/**
 * The scenario keys of listeners and guards, each with its Cordis event (null: a guard,
 * `ctx.tools.guard`) and the Session factory of its callable.
 */
const LISTENER_KINDS = {
  preExecute: ['tools/pre-execute', (session, spec) => session.preListener(spec)],
  guards: [null, (session, spec) => session.guard(spec)],
  wrappers: ['tools/execute', (session, spec) => session.wrapper(spec)],
  postExecute: ['tools/post-execute', (session, spec) => session.postListener(spec)],
  observers: ['tools/result', (session, spec) => session.observer(spec)],
  codeDispatchLog: ['tools/code-dispatch-log', (session, spec) => session.codeDispatchLog(spec)],
}

/**
 * The registrations of listeners, guards and the timeout policy, each with the disposer
 * upstream returned for it (_Listeners of conformance/adapters/reference). Registering an id
 * again registers the very callable it registered before (a plugin that reloads registers its
 * listener anew); disposing an id runs the disposer of its latest registration, and `again`
 * runs the last spent one once more (PIPE-6).
 */
class Listeners {
  constructor(session, contextFor, ctx, policy) {
    this.session = session
    this.contextFor = contextFor
    this.ctx = ctx
    this.specs = new Map()
    for (const kind of Object.keys(LISTENER_KINDS)) {
      for (const spec of session.scenario[kind] ?? []) this.specs.set(`${kind}/${spec.id}`, spec)
    }
    this.made = new Map()
    this.live = new Map()
    this.spent = new Map()
    // the timeout policy plugged at set-up: its fiber disposes it
    if (policy !== undefined) this.live.set('timeoutPolicy/timeoutPolicy', [() => policy.dispose()])
  }

  async register(kind, id) {
    const key = `${kind}/${id}`
    let disposer
    if (kind === 'timeoutPolicy') {
      if (!TimeoutPolicy) throw new Inexpressible(`the timeout policy: ${MISSING['timeout-policy']}`)
      const fiber = this.ctx.plugin(TimeoutPolicy)
      await fiber
      disposer = () => fiber.dispose()
    } else {
      const spec = this.specs.get(key)
      if (spec === undefined || !(kind in LISTENER_KINDS)) throw new ScriptError(`no scenario ${kind} with id ${JSON.stringify(id)}`)
      const [event, make] = LISTENER_KINDS[kind]
      if (!this.made.has(key)) this.made.set(key, make(this.session, spec))
      const target = this.contextFor(spec.scope)
      disposer = event === null ? target.tools.guard(this.made.get(key)) : target.on(event, this.made.get(key))
    }
    if (!this.live.has(key)) this.live.set(key, [])
    this.live.get(key).push(disposer)
  }

  async dispose(kind, id, again = false) {
    const key = `${kind}/${id}`
    if (again) {
      await this.spent.get(key)?.()
      return
    }
    const disposer = this.live.get(key)?.pop()
    if (disposer !== undefined) {
      this.spent.set(key, disposer)
      await disposer()
    }
  }
}

/**
 * Run a scenario's actions in order through `driver` (@toolreg/interpreter's runActions): a batch
 * has no counterpart upstream, so it is inexpressible.
 */
export function runActions(scenario, driver) {
  return sharedRunActions(scenario, {
    unsupported: (action) => {
      throw new Inexpressible('batch' in action ? `a batch: ${NO_SCHEDULER}` : `action ${JSON.stringify(Object.keys(action))}`)
    },
    ...driver,
  })
}
