// A module resolve hook (node:module register): resolve the harness's own imports of
// `@deepseek-ai/*` from the release chosen with --upstream (see upstream.mjs), and
// never let anything of that release resolve outside its directory. (Node's lookup
// walks up the directory tree: a package missing from versions/<release>/node_modules
// would otherwise be found in ./node_modules -- another release.)

let parentURL
let rootURL
let harnessURL

/** @param {{ parentURL: string, rootURL: string, harnessURL: string }} data */
export function initialize(data) {
  ;({ parentURL, rootURL, harnessURL } = data)
}

export async function resolve(specifier, context, nextResolve) {
  const from = context.parentURL ?? ''
  const ours = from.startsWith(harnessURL) && !from.includes('/node_modules/') && !from.includes('/versions/')
  const upstream = from.startsWith(rootURL)
  if (!(upstream || (ours && specifier.startsWith('@deepseek-ai/')))) return nextResolve(specifier, context)
  const resolved = await nextResolve(specifier, ours ? { ...context, parentURL } : context)
  if (resolved.url.startsWith('file:') && !resolved.url.startsWith(rootURL)) {
    const error = new Error(`Cannot find package '${specifier}' in ${rootURL} (found only outside it: ${resolved.url})`)
    error.code = 'ERR_MODULE_NOT_FOUND'
    throw error
  }
  return resolved
}
