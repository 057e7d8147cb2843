import type { Principal } from '../auth/principal.js';
import type { LakeServices } from '../assembly/services.js';
import type { ClientAddresses } from './client-address.js';

/** What every request handler can read from the Hono context. */
export interface ApiEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    services: LakeServices;
    /** How the client's address is read (LAKE_TRUSTED_PROXIES). */
    clientAddresses: ClientAddresses;
    /** Origin for links in responses (--public-url, or the address lake serve listens on); else the request's own. */
    publicUrl: string | undefined;
  };
}
