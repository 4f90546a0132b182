// The scenario run_code program language: programs are JSON, `{"steps": [...]}`.
//
// The twin of conformance/interpreter/code_runtime.py (ScriptedCodeRuntime); the
// golden cases with a `program` in conformance/fixtures/interpreter/ pin both.
//
// Steps: `{"call": NAME, "arguments": {...}}` calls a tool through the SDK (a
// failed call becomes an outcome, the program goes on); `{"log": TEXT}`;
// `{"return": VALUE}` ends the program with VALUE; `{"fail": TEXT}` fails the
// run. Without a `return` the program's value is the list of call outcomes,
// each `{"ok": value}` or `{"error": {"toolName": ..., "message": ...}}`.

/**
 * Run one program against an SDK.
 * @param {string} code - the program's JSON text
 * @param {{call: (name: string, args: unknown) => unknown, log: (line: string) => void,
 *          callError?: (name: string, error: unknown) => object}} sdk -
 *   `call` returns (or resolves to) the tool's value and throws (or rejects) when the call fails;
 *   `callError` shapes a failed call's outcome (default `{toolName, message}`)
 * @returns {Promise<{value: unknown} | {failed: string}>} the program's value, or why the run failed
 */
export async function runProgram(code, sdk) {
  let steps
  try {
    steps = JSON.parse(code).steps
    if (!Array.isArray(steps)) throw new TypeError('"steps" is not a list')
  } catch (e) {
    return { failed: `not a scripted program: ${e.message}` }
  }
  const callError = sdk.callError ?? ((name, e) => ({ toolName: name, message: e?.message ?? String(e) }))
  const outcomes = []
  for (const step of steps) {
    if (step === null || typeof step !== 'object') continue
    if ('call' in step) {
      try {
        outcomes.push({ ok: await sdk.call(step.call, step.arguments ?? {}) })
      } catch (e) {
        outcomes.push({ error: callError(step.call, e) })
      }
    } else if ('log' in step) {
      sdk.log(String(step.log))
    } else if ('return' in step) {
      return { value: step.return }
    } else if ('fail' in step) {
      return { failed: String(step.fail) }
    }
  }
  return { value: outcomes }
}
