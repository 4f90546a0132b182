#!/usr/bin/env node
// toolreg-conformance stdio harness for the Vercel AI SDK, npm `ai` (harness protocol v1).
//
//   npm ci --prefix harnesses/vercel-ai
//   toolreg-conformance run --adapter "stdio:node harnesses/vercel-ai/harness.mjs" --rules portable
//
// The protocol loop is @toolreg/interpreter/stdio's (imported first: it guards stdout
// before the SDK loads); a scenario the SDK cannot express (Inexpressible) is `skipped`.

import { serve } from '@toolreg/interpreter/stdio'

await serve(() => import('./vercel.mjs'), { cannotExpress: 'the AI SDK cannot express this' })
