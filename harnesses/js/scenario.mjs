// What a harness reads off a scenario before it maps it: its calls, its scripts, and
// whether it needs a capability the implementation lacks. The twins of
// conformance/scenario/schema.py (calls_of, scripts_of) and conformance/seam/adapter.py
// (which stage a scenario scripts: the stage table, conformance/fixtures/schema/stages.json,
// read here, never restated). No import side effect: importing this module guards nothing
// (stdio.mjs does, and re-exports Inexpressible from here).

import { readFileSync } from 'node:fs'

/** The scenario (or one of its calls) cannot be said to the implementation: `skipped`. */
export class Inexpressible extends Error {}

/** The stage table: the kit's copy in this checkout. */
const STAGE_TABLE_URL = new URL('../../conformance/fixtures/schema/stages.json', import.meta.url)

/** Each stage a scenario scripts, in the table's order: `{capability, at, key}`. */
export const SCRIPTED_STAGES = JSON.parse(readFileSync(STAGE_TABLE_URL, 'utf8'))
  .stages.filter((row) => row.capability !== null && row.scripted)
  .map((row) => ({ capability: row.capability, at: row.scripted.at, key: row.scripted.key }))

// The scenario keys of listeners and the scripted keys of a tool (schema.py's
// LISTENER_KEYS, TOOL_SCRIPT_KEYS).
const LISTENER_KEYS = ['preExecute', 'guards', 'wrappers', 'postExecute', 'observers', 'codeDispatchLog']
const TOOL_SCRIPT_KEYS = ['execute', 'finalizeContent', 'isConcurrencySafe']

/** Every model-direct call of a scenario, in action order (a call; each of a batch). */
export function callsOf(scenario) {
  return (scenario.actions ?? []).flatMap((a) => ('call' in a ? [a.call] : 'batch' in a ? a.batch : []))
}

/** Every script of a scenario: listeners', tools' and the approval service's (byCall too). */
export function scriptsOf(scenario) {
  const scripts = LISTENER_KEYS.flatMap((key) => (scenario[key] ?? []).map((entry) => entry.steps ?? []))
  for (const tool of scenario.tools ?? []) {
    for (const key of TOOL_SCRIPT_KEYS) if (Array.isArray(tool[key])) scripts.push(tool[key])
  }
  const approval = scenario.approval
  if (approval !== undefined && approval !== null) {
    scripts.push(approval.steps ?? [])
    scripts.push(...Object.values(approval.byCall ?? {}))
  }
  return scripts
}

/** The step kinds (each step's keys) the scenario's scripts use. */
export function stepKinds(scenario) {
  return new Set(scriptsOf(scenario).flatMap((script) => script.flatMap((step) => (step && typeof step === 'object' ? Object.keys(step) : []))))
}

/** A script that only records what it sees (`observe` steps): it changes nothing. */
export function looksOn(spec) {
  return (spec.steps ?? []).every((step) => Object.keys(step).length === 1 && 'observe' in step)
}

/** Does a call of the scenario make caller writes (`afterInvoke` / `afterResult`)? */
export function writesAsCaller(scenario) {
  return callsOf(scenario).some((c) => c.afterInvoke?.length > 0 || c.afterResult?.length > 0)
}

/** A scenario key that scripts its stage: present and not off (null, false, an empty list). */
const isOn = (value) => value !== undefined && value !== null && value !== false && !(Array.isArray(value) && value.length === 0)

/**
 * Why the implementation cannot express `scenario`, by `missing` (a harness's MISSING:
 * capability -> why): the first stage the scenario scripts (stage table order; a scenario
 * key present and not off, or a tool with the key) whose capability is missing, as
 * `${key}: ${why}`; else, with `registry-mutation` missing, a tool that waits for a
 * `register` action (registered: false). Undefined when neither applies.
 */
export function unexpressed(scenario, missing) {
  const tools = scenario.tools ?? []
  for (const { capability, at, key } of SCRIPTED_STAGES) {
    if (!Object.hasOwn(missing, capability)) continue
    if (at === 'tool' ? tools.some((t) => key in t) : isOn(scenario[key])) return `${key}: ${missing[capability]}`
  }
  if (Object.hasOwn(missing, 'registry-mutation') && tools.some((t) => t.registered === false)) return missing['registry-mutation']
  return undefined
}
