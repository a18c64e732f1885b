import { clientIdPattern } from '@rsd/contracts';
import { digestApiKey, digestsMatch, generateApiKey, generateClientId, hasValidChecksum } from './credential-formats';

describe('credential formats', () => {
  test('when a key is generated, then it carries the prefix and a checksum that verifies', () => {
    const key = generateApiKey('rsk');
    expect(key).toMatch(/^rsk_[0-9A-Za-z]{49}$/);
    expect(hasValidChecksum(key, 'rsk')).toBe(true);
  });

  test('when any one character of a key changes, then the checksum rejects it', () => {
    const key = generateApiKey('rsk');
    for (let i = 4; i < key.length; i += 1) {
      const changed = key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);
      expect(hasValidChecksum(changed, 'rsk')).toBe(false);
    }
  });

  test('when a key has the wrong prefix or length, then it is rejected', () => {
    const key = generateApiKey('rsk');
    expect(hasValidChecksum(key, 'abc')).toBe(false);
    expect(hasValidChecksum(`${key}0`, 'rsk')).toBe(false);
    expect(hasValidChecksum('', 'rsk')).toBe(false);
  });

  test('when keys are generated, then they are distinct', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey('rsk')));
    expect(keys.size).toBe(1000);
  });

  test('when a Client ID is generated, then it matches the documented format', () => {
    expect(generateClientId('rs')).toMatch(clientIdPattern('rs'));
  });

  test('when digests are compared, then only equal digests match', () => {
    const key = generateApiKey('rsk');
    expect(digestsMatch(digestApiKey(key), digestApiKey(key))).toBe(true);
    expect(digestsMatch(digestApiKey(key), digestApiKey(generateApiKey('rsk')))).toBe(false);
    expect(digestsMatch(digestApiKey(key), '')).toBe(false);
    expect(digestApiKey(key)).not.toContain(key);
  });
});
