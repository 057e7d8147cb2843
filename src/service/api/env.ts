import type { OperatorPrincipal } from '../auth/operator-credentials.js';
import type { Principal } from '../auth/principal.js';
import type { LakeServices } from '../assembly/services.js';
import type { ClientAddresses } from './client-address.js';
import type { StreamSlots } from './stream-slots.js';

/** What every request handler can read from the Hono context. */
export interface ApiEnv {
  Variables: {
    requestId: string;
    /** The contract route's path template once one matched (what request metrics are labelled with). */
    route: string | undefined;
    principal: Principal;
    /** Set instead of `principal` when the service operator's token called (organization routes, the audit log). */
    operator: OperatorPrincipal | undefined;
    services: LakeServices;
    /** How the client's address is read (LAKE_TRUSTED_PROXIES). */
    clientAddresses: ClientAddresses;
    /** Origin for links in responses (--public-url, or the address lake serve listens on); else the request's own. */
    publicUrl: string | undefined;
    /** The server's log, for what a response cannot carry (a stream that failed after its headers were sent). */
    log: (line: object) => void;
    /** The event streams open on this server, by caller and organization (STREAM_LIMITS). */
    streamSlots: StreamSlots;
  };
}
