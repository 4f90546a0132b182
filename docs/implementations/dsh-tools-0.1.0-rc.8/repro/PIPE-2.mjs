// PIPE-2 on @deepseek-ai/dsh-tools 0.1.0-rc.8: ../../dsh-tools-repro/PIPE-2.mjs, its imports pinned to
// this release. From the repository root:
//   npm ci --prefix harnesses/dsh && node docs/implementations/dsh-tools-0.1.0-rc.8/repro/PIPE-2.mjs
import { reproduce } from '../../dsh-tools-repro/pin.mjs'
await reproduce('0.1.0-rc.8', 'PIPE-2')
