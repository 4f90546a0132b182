// CANCEL-2 on @deepseek-ai/dsh-tools 0.1.0-rc.7: ../../dsh-tools-repro/CANCEL-2.mjs, its imports pinned to
// this release. From the repository root:
//   npm ci --prefix harnesses/dsh/versions/0.1.0-rc.7 && node docs/implementations/dsh-tools-0.1.0-rc.7/repro/CANCEL-2.mjs
import { reproduce } from '../../dsh-tools-repro/pin.mjs'
await reproduce('0.1.0-rc.7', 'CANCEL-2')
