// Runs one reproduction of this directory against one pinned dsh-tools release.
//
//   import { reproduce } from '../../dsh-tools-repro/pin.mjs'
//   await reproduce('0.1.0-rc.6', 'PIPE-3')
//
// The scripts here import `@deepseek-ai/*` by their public names, as a dsh-tools user
// would (copy one into a project that has dsh-tools installed and run it with node).
// Here their imports resolve from the release's own install: harnesses/dsh/node_modules
// for 0.1.0-rc.8, harnesses/dsh/versions/<release>/node_modules for the earlier ones
// (npm ci --prefix that directory first). The script then checks it got that release.
import { existsSync } from 'node:fs'
import { register } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
const HARNESS = join(HERE, '..', '..', '..', 'harnesses', 'dsh')

export async function reproduce(release, rule) {
  const root = existsSync(join(HARNESS, 'versions', release)) ? join(HARNESS, 'versions', release) : HARNESS
  if (!existsSync(join(root, 'node_modules', '@deepseek-ai', 'dsh-tools'))) {
    console.error(`dsh-tools ${release} is not installed: npm ci --prefix ${root}`)
    process.exit(2)
  }
  register('./resolve.mjs', import.meta.url, {
    data: { scripts: pathToFileURL(HERE + '/').href, root: pathToFileURL(root + '/').href },
  })
  process.env.DSH_TOOLS_RELEASE = release
  await import(`./${rule}.mjs`)
}
