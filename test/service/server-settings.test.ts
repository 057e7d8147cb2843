import { describe, expect, it } from 'vitest';
import { ClientAddresses } from '../../src/service/api/client-address.js';
import { SYNC_DEFAULTS, syncSettingsFromEnv } from '../../src/service/syncs/settings.js';

describe('settings an operator gives lake serve', () => {
  it('LAKE_TRUSTED_PROXIES: addresses and blocks; the client is the right-most hop no trusted proxy vouches for', () => {
    const addresses = ClientAddresses.fromEnv({ LAKE_TRUSTED_PROXIES: '10.0.0.5, 192.168.0.0/16, fd00::/8' });
    expect(addresses.of(undefined, undefined)).toBe('local');
    // Not from a trusted proxy: the header is ignored, whatever it says.
    expect(addresses.of('203.0.113.1', '1.2.3.4')).toBe('203.0.113.1');
    expect(addresses.of('10.0.0.5', '198.51.100.7, 192.168.1.1')).toBe('198.51.100.7');
    expect(addresses.of('::ffff:10.0.0.5', '198.51.100.8')).toBe('198.51.100.8');
    // A hop that is not an address ends the walk at the last proxy that vouched.
    expect(addresses.of('10.0.0.5', '198.51.100.9, not-an-address')).toBe('10.0.0.5');
    for (const bad of ['10.0.0.300', '10.0.0.0/33', 'proxy.internal', 'fd00::/129', '10.0.0.0/x']) {
      expect(() => ClientAddresses.fromEnv({ LAKE_TRUSTED_PROXIES: bad })).toThrow(/LAKE_TRUSTED_PROXIES/);
    }
  });

  it('LAKE_SYNC_* and LAKE_SOURCE_*: defaults, seconds become milliseconds, anything not a positive number refused', () => {
    expect(syncSettingsFromEnv({})).toEqual(SYNC_DEFAULTS);
    expect(
      syncSettingsFromEnv({ LAKE_SYNC_IDLE_TIMEOUT_SECONDS: '5', LAKE_SYNC_CONCURRENCY_PER_ORG: '1' }),
    ).toMatchObject({ idleTimeoutMs: 5000, perOrganization: 1 });
    for (const value of ['0', '-1', 'ten', 'Infinity']) {
      expect(() => syncSettingsFromEnv({ LAKE_SYNC_MAX_RECORD_BYTES: value })).toThrow(
        /LAKE_SYNC_MAX_RECORD_BYTES must be a positive number/,
      );
    }
  });
});
