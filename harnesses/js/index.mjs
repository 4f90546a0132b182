// @toolreg/interpreter: the scenario language for JavaScript harnesses.
export {
  attemptWrite,
  Binding,
  decode,
  dumps,
  jsonable,
  loadStepTable,
  nothing,
  ScriptError,
  Session,
  STEP_TABLE,
  STEP_TABLE_URL,
} from './interpreter.mjs'
export { runProgram } from './program.mjs'
export {
  ACTION_DEADLINE_MS,
  actionDeadline,
  DeadlineExceeded,
  deadline,
  describeError,
  runActions,
  wellFormed,
  withinDeadline,
} from './runner.mjs'
export { modelEntry } from './wire.mjs'
