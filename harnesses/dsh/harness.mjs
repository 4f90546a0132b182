#!/usr/bin/env node
// toolreg-conformance stdio harness for @deepseek-ai/dsh-tools (harness protocol v1).
//
//   npm ci --prefix harnesses/dsh
//   toolreg-conformance run --adapter "stdio:node harnesses/dsh/harness.mjs"
//   toolreg-conformance run --adapter "stdio:node harnesses/dsh/harness.mjs --upstream 0.1.0-rc.6"
//
// The protocol loop is @toolreg/interpreter/stdio's (imported first: it guards stdout
// before upstream's modules load); this file only chooses the release and the binding.

import { serve } from '@toolreg/interpreter/stdio'

// The release under test (--upstream, see upstream.mjs): a bad choice ends the harness
// before the handshake, with the reason on stderr.
let upstream
try {
  upstream = await import('./upstream.mjs')
} catch (e) {
  process.stderr.write(`harness: ${e.message}\n`)
  process.exit(2)
}
if (upstream.PINNED) {
  const { register } = await import('node:module')
  register('./pin-upstream.mjs', import.meta.url, { data: upstream.HOOK_DATA })
}

await serve(() => import('./dsh.mjs'), { cannotExpress: 'dsh-tools cannot express this' })
