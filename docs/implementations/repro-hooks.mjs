// Resolve a standalone reproduction's imports from its npm harness (docs/implementations/repro.py).
//
//   TOOLREG_REPRO_HARNESS=harnesses/vercel-ai TOOLREG_REPRO_DIR=DIR/repro \
//     node --import ./docs/implementations/repro-hooks.mjs DIR/repro/PIPE-5.mjs
//
// Loaded with --import, this module registers itself (node:module register) as a resolve
// hook. A bare import of the reproduction (`ai`, `@deepseek-ai/dsh-tools`) resolves as if it
// were made from the harness directory, whose lockfile pins the packages; every resolution
// made from the reproduction's directory or from the harness must land inside one of the
// two (or be a node: builtin): no package from anywhere else (another release's
// node_modules up the tree, the kit's own harnesses/js) can stand in.
import { register } from 'node:module'
import { pathToFileURL } from 'node:url'
import { isMainThread } from 'node:worker_threads'

let harnessURL
let reproURL

if (isMainThread && process.env.TOOLREG_REPRO_HARNESS) {
  const dir = (path) => pathToFileURL(path.endsWith('/') ? path : `${path}/`).href
  register(import.meta.url, {
    data: {
      harnessURL: dir(process.env.TOOLREG_REPRO_HARNESS),
      reproURL: dir(process.env.TOOLREG_REPRO_DIR ?? process.cwd()),
    },
  })
}

/** @param {{ harnessURL: string, reproURL: string }} data */
export function initialize(data) {
  ;({ harnessURL, reproURL } = data)
}

const bare = (specifier) => !/^(\.|\/|[a-z][a-z0-9+.-]*:)/i.test(specifier)

export async function resolve(specifier, context, nextResolve) {
  const from = context.parentURL ?? ''
  const fromRepro = from.startsWith(reproURL)
  const fromHarness = from.startsWith(harnessURL)
  if (!fromRepro && !fromHarness) return nextResolve(specifier, context)
  const asked = fromRepro && bare(specifier) ? { ...context, parentURL: `${harnessURL}package.json` } : context
  const resolved = await nextResolve(specifier, asked)
  const url = resolved.url
  if (url.startsWith('file:') && !url.startsWith(harnessURL) && !url.startsWith(reproURL)) {
    const error = new Error(
      `${specifier} (imported by ${from}) resolves to ${url}, outside the harness ${harnessURL} ` +
        'and the reproduction: a reproduction uses only its harness packages (repro/HARNESS)',
    )
    error.code = 'ERR_MODULE_NOT_FOUND'
    throw error
  }
  return resolved
}
