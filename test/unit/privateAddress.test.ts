import assert from 'node:assert/strict';
import { isPrivateHost } from '../../src/core/privateAddress';

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
});
