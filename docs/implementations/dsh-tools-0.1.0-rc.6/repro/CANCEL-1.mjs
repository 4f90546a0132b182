// CANCEL-1 on @deepseek-ai/dsh-tools 0.1.0-rc.6: ../../dsh-tools-repro/CANCEL-1.mjs, its imports pinned to
// this release. From the repository root:
//   npm ci --prefix harnesses/dsh/versions/0.1.0-rc.6 && node docs/implementations/dsh-tools-0.1.0-rc.6/repro/CANCEL-1.mjs
import { reproduce } from '../../dsh-tools-repro/pin.mjs'
await reproduce('0.1.0-rc.6', 'CANCEL-1')
