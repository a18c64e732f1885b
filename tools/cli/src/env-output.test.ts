import { claimLinkExportsOf, CREDENTIAL_EXPORTS, exportsOf, WEBHOOK_EXPORTS } from './env-output';

describe('rsd --env', () => {
  test('when a credential is created, then its Client ID and key are export lines a shell can eval', () => {
    expect(exportsOf({ clientId: 'rs_abc', apiKey: 'rsk_x', status: 'active' }, CREDENTIAL_EXPORTS)).toBe(
      "export CLIENT_ID='rs_abc'\nexport RSD_API_KEY='rsk_x'",
    );
  });

  test('when a value holds a quote, then it stays one word for the shell; fields absent are left out', () => {
    expect(exportsOf({ id: "wh_'1", url: 'x' }, WEBHOOK_EXPORTS)).toBe(`export WEBHOOK_ID='wh_'\\''1'`);
    expect(exportsOf(undefined, WEBHOOK_EXPORTS)).toBe('');
  });

  test('when a claim link is issued, then its Client ID and link are export lines, and no key (there is none yet)', () => {
    expect(claimLinkExportsOf({ clientId: 'rs_abc', keyClaimed: false, claim: { url: 'http://h/claim/t', expiresAt: 'x' } })).toBe(
      "export CLIENT_ID='rs_abc'\nexport RSD_CLAIM_URL='http://h/claim/t'",
    );
  });
});
