import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addressBucket, ipFamily, plainAddress } from '../../src/service/net/addresses.js';

/**
 * Addresses as the outbound rules and the per-client limits see them. ipFamily answers what `net.isIP` answers
 * without Node's IPv6 expression for text that cannot be IPv6 (its first compile cost every local command 3–4 ms).
 */
describe('addresses', () => {
  const spellings = [
    '127.0.0.1',
    '0.0.0.0',
    '255.255.255.255',
    '256.1.1.1',
    '127.1',
    '2130706433',
    '01.2.3.4',
    '1.2.3.4 ',
    '1.2.3.4:80',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::7f00:1',
    'fe80::1%eth0',
    '2001:db8::1',
    '2001:db8:0:0:0:0:0:1:2',
    '1::2::3',
    '[::1]',
    ':',
    'a:b',
    'local',
    'localhost',
    'db.example.com',
    '',
    'ａ.b',
  ];

  it('tells the family of every spelling as net.isIP does', () => {
    for (const text of spellings) expect({ text, family: ipFamily(text) }).toEqual({ text, family: isIP(text) });
  });

  it('reads IPv4 inside IPv6 as the IPv4 address it carries', () => {
    expect(plainAddress('::ffff:127.0.0.1')).toEqual({ address: '127.0.0.1', family: 'ipv4' });
    expect(plainAddress('::ffff:7f00:1')).toEqual({ address: '127.0.0.1', family: 'ipv4' });
    expect(plainAddress('64:ff9b::a00:1')).toEqual({ address: '10.0.0.1', family: 'ipv4' });
    expect(plainAddress('::1')).toEqual({ address: '0:0:0:0:0:0:0:1', family: 'ipv6' });
    expect(plainAddress('10.1.2.3')).toEqual({ address: '10.1.2.3', family: 'ipv4' });
  });

  it('counts an IPv6 client by its /64, an IPv4 client by its address and anything else as itself', () => {
    expect(addressBucket('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressBucket('192.0.2.7')).toBe('192.0.2.7');
    expect(addressBucket('local')).toBe('local');
  });
});
