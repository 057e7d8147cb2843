import type { Socket } from 'node:net';

/**
 * Whether a connection's silence is lake's own: bytes the server sent are waiting for lake to read them (its loads
 * are behind, so reading waits for room and the socket stops reading). The idle bound is for a server that sends
 * nothing while lake waits on it; a server whose rows lake has not taken yet is waiting on lake, and its socket's
 * timer starts again once lake reads.
 */
export const lakeIsBehind = (socket: Socket): boolean => socket.readableLength > 0;
