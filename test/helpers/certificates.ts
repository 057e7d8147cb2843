import { execFileSync } from 'node:child_process';

/**
 * Writes a self-signed certificate of a day for `localhost` and its key (PEM) at the paths given: for a test's own
 * server that clients reach over TLS without verifying it (ssl_mode require). `asUser` runs openssl as that user,
 * so a server that checks who owns its key (PostgreSQL) takes it.
 */
export function writeSelfSigned(keyPath: string, certPath: string, asUser?: string): void {
  const openssl = [
    'openssl',
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-days',
    '1',
    '-keyout',
    keyPath,
    '-out',
    certPath,
  ];
  const [command, ...args] = asUser ? ['runuser', '-u', asUser, '--', ...openssl] : openssl;
  execFileSync(command as string, args, { stdio: 'ignore' });
}
