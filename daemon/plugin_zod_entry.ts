// What the standard harness's plugin takes of zod: `any()`, whose schemas carry a module's JSON
// Schema as metadata and can be made optional. `make plugin-zod` bundles it into plugin_zod.js.
import { any } from 'zod'

export const z = { any }
