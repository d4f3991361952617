import assert from 'node:assert/strict';
import { isPrivateHost, privateAddressesOf, type HostLookup } from '../../src/core/privateAddress';

describe('isPrivateHost', () => {
  it('loopback, private, link-local and unique-local addresses and the localhost names are private', () => {
    for (const host of [
      'localhost',
      'LocalHost.',
      'db.localhost',
      '127.0.0.1',
      '127.255.0.9',
      '0.0.0.0',
      '10.200.3.4',
      '172.16.0.1',
      '172.31.255.254',
      '192.168.44.1',
      '169.254.169.254',
      '[::1]',
      '[::]',
      '[fc00::1]',
      '[fdff:1234::5]',
      '[fe80::1]',
      '[febf::1]',
      '[::ffff:7f00:1]',
      '[::ffff:a00:1]',
    ]) {
      assert.equal(isPrivateHost(host), true, host);
    }
  });

  it('public addresses and other names are not', () => {
    for (const host of [
      'images.example.test',
      'localhost.example.test',
      '172.15.255.255',
      '172.32.0.0',
      '192.169.0.1',
      '11.0.0.1',
      '8.8.8.8',
      '[2001:db8::1]',
      '[fec0::1]',
      '[fe00::1]',
      '[::ffff:808:808]',
    ]) {
      assert.equal(isPrivateHost(host), false, host);
    }
  });

  it('an IPv6 address embedding a private IPv4 one (NAT64, IPv4-compatible) is private', () => {
    for (const host of ['[64:ff9b::7f00:1]', '[64:ff9b::10.0.0.1]', '[::127.0.0.1]', '[::c0a8:101]'])
      assert.equal(isPrivateHost(host), true, host);
    assert.equal(isPrivateHost('[64:ff9b::808:808]'), false, 'NAT64 of a public address');
  });
});

describe('privateAddressesOf: a public name that resolves to a private address (DNS rebinding)', () => {
  /** A lookup that answers `addresses` for every name, and records the names asked. */
  const answering = (...addresses: string[]): HostLookup & { asked: string[] } => {
    const asked: string[] = [];
    return Object.assign(
      async (name: string) => {
        asked.push(name);
        return addresses.map((address) => ({ address }));
      },
      { asked },
    );
  };

  it('finds every private address a name resolves to, whatever the family or form', async () => {
    for (const address of ['127.0.0.1', '10.9.8.7', '::1', '::ffff:127.0.0.1', '169.254.169.254', 'fd00::5']) {
      const lookup = answering(address);
      assert.deepEqual(await privateAddressesOf('images.rebind.example', lookup), [address], address);
      assert.deepEqual(lookup.asked, ['images.rebind.example']);
    }
  });

  it('a name with a public and a private address is refused for the private one', async () => {
    assert.deepEqual(await privateAddressesOf('cdn.example', answering('93.184.216.34', '192.168.1.20')), [
      '192.168.1.20',
    ]);
  });

  it('public answers, literal addresses and names that do not resolve give none; literal private ones are themselves', async () => {
    assert.deepEqual(await privateAddressesOf('cdn.example', answering('93.184.216.34', '2606:2800:220:1::1')), []);
    const lookup = answering('127.0.0.1');
    assert.deepEqual(await privateAddressesOf('8.8.8.8', lookup), []);
    assert.deepEqual(await privateAddressesOf('[2001:db8::1]', lookup), []);
    assert.deepEqual(lookup.asked, [], 'a literal address is not looked up');
    assert.deepEqual(await privateAddressesOf('127.0.0.1', lookup), ['127.0.0.1']);
    const failing: HostLookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    assert.deepEqual(await privateAddressesOf('gone.example', failing), []);
  });
});
