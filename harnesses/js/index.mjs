// @toolreg/interpreter: the scenario language for JavaScript harnesses.
export {
  attemptWrite,
  Binding,
  decode,
  dumps,
  jsonable,
  loadStepTable,
  nothing,
  Runaway,
  RUNAWAY_ENTRIES,
  ScriptError,
  Session,
  STEP_TABLE,
  STEP_TABLE_URL,
} from './interpreter.mjs'
export { runProgram } from './program.mjs'
export {
  ACTION_DEADLINE_MS,
  actionDeadline,
  batchResults,
  DeadlineExceeded,
  deadline,
  describeError,
  errorResult,
  runActions,
  settle,
  successResult,
  wellFormed,
  withinDeadline,
} from './runner.mjs'
export { callsOf, Inexpressible, looksOn, scriptsOf, stepKinds, unexpressed, writesAsCaller } from './scenario.mjs'
export { modelEntry, textOf, wireText } from './wire.mjs'
