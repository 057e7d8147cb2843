import type { Principal } from '../auth/principal.js';
import type { LakeServices } from '../services.js';

/** What every request handler can read from the Hono context. */
export interface ApiEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    services: LakeServices;
  };
}
