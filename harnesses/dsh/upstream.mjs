// Which dsh-tools release this harness process drives: one harness, several releases.
//
//   node harnesses/dsh/harness.mjs                          # the release in ./package.json (0.1.0-rc.8)
//   node harnesses/dsh/harness.mjs --upstream 0.1.0-rc.6    # the release pinned in ./versions/0.1.0-rc.6/
//
// Each `versions/<release>/` holds only a package.json and its lockfile pinning every
// `@deepseek-ai/*` package at that release (`npm ci --prefix harnesses/dsh/versions/<release>`).
// With `--upstream`, harness.mjs registers `pin-upstream.mjs`, a module resolve hook that
// resolves every `@deepseek-ai/*` import of this directory's own files from that
// release's node_modules; everything else (`@toolreg/interpreter`) still resolves from
// ./node_modules. Upstream's own imports resolve from where upstream is installed, so
// nothing of one release can reach another.

import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))

/** The directory whose package.json pins the release under test. */
export const ROOT = (() => {
  const at = process.argv.indexOf('--upstream')
  if (at < 0) return HERE
  const release = process.argv[at + 1]
  if (!release || !/^[0-9A-Za-z.+-]+$/.test(release)) {
    throw new Error(`--upstream needs a release name (a directory of ${join(HERE, 'versions')})`)
  }
  const root = join(HERE, 'versions', release)
  if (!existsSync(join(root, 'package.json'))) {
    throw new Error(`no pinned release ${release}: ${join(root, 'package.json')} does not exist`)
  }
  if (!existsSync(join(root, 'node_modules', '@deepseek-ai', 'dsh-tools'))) {
    throw new Error(`release ${release} is not installed: run npm ci --prefix ${root}`)
  }
  return root
})()

/** Whether a release other than ./package.json's is pinned (the resolve hook is needed). */
export const PINNED = ROOT !== HERE

/** What the hook needs: where to resolve `@deepseek-ai/*` from, and whose imports to redirect. */
export const HOOK_DATA = {
  parentURL: pathToFileURL(join(ROOT, 'package.json')).href,
  rootURL: pathToFileURL(ROOT + '/').href,
  harnessURL: pathToFileURL(HERE + '/').href,
}
