// The module resolve hook pin.mjs registers: the scripts' `@deepseek-ai/*` imports resolve
// from the pinned release's directory, and nothing of it may resolve outside that directory.
let scripts
let root

export function initialize(data) {
  ;({ scripts, root } = data)
}

export async function resolve(specifier, context, nextResolve) {
  const from = context.parentURL ?? ''
  const ours = from.startsWith(scripts) && specifier.startsWith('@deepseek-ai/')
  if (!ours && !from.startsWith(root)) return nextResolve(specifier, context)
  const resolved = await nextResolve(specifier, ours ? { ...context, parentURL: root + 'package.json' } : context)
  if (resolved.url.startsWith('file:') && !resolved.url.startsWith(root)) {
    throw Object.assign(new Error(`${specifier} resolved outside ${root}: ${resolved.url}`), { code: 'ERR_MODULE_NOT_FOUND' })
  }
  return resolved
}
