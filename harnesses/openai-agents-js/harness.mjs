#!/usr/bin/env node
// toolreg-conformance stdio harness for the OpenAI Agents SDK for JavaScript, npm
// @openai/agents (harness protocol v1).
//
//   npm ci --prefix harnesses/openai-agents-js
//   toolreg-conformance run --adapter "stdio:node harnesses/openai-agents-js/harness.mjs" --rules portable
//
// The protocol loop is @toolreg/interpreter/stdio's (imported first: it guards stdout
// before the SDK loads); a scenario the SDK cannot express (Inexpressible) is `skipped`.

import { serve } from '@toolreg/interpreter/stdio'

await serve(() => import('./agents.mjs'), { cannotExpress: 'the OpenAI Agents SDK cannot express this' })
