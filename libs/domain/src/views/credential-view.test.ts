import { EVENT_TYPES } from '@rsd/contracts';
import { anEvent } from '@rsd/testkit';
import { credentialView } from './credential-view';

const at = new Date('2026-11-20T00:00:00.000Z');
const ids = { clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA', organizationId: 'acme' };

const createdWithoutKey = anEvent(
  EVENT_TYPES.authorizationCreated,
  {
    ...ids,
    recipientType: 'auditor',
    recipientName: null,
    scopes: ['qr_score'],
    expiresAt: null,
    keyDigest: null,
    createdAt: at.toISOString(),
    revision: 1,
  },
  { time: at },
);
const claimed = (revision: number, keyDigest: string) =>
  anEvent(EVENT_TYPES.authorizationKeyClaimed, { ...ids, keyDigest, claimedAt: at.toISOString(), revision }, { time: at });

describe('credential view: keys delivered by claim link (decision 38)', () => {
  test('when an authorization is created by claim link, then the view holds no key until the KeyClaimed event brings its digest', () => {
    const unclaimed = credentialView.evolve(undefined, createdWithoutKey);

    expect(unclaimed).toMatchObject({ keyDigest: null, status: 'active', revision: 1 });
    expect(credentialView.evolve(unclaimed, claimed(2, 'c'.repeat(64)))).toMatchObject({ keyDigest: 'c'.repeat(64), revision: 2 });
  });

  test('when the KeyClaimed event comes again or for an unknown credential, then nothing changes', () => {
    const after = credentialView.evolve(credentialView.evolve(undefined, createdWithoutKey), claimed(2, 'c'.repeat(64)));

    expect(credentialView.evolve(after, claimed(2, 'c'.repeat(64)))).toBe(after);
    expect(credentialView.evolve(undefined, claimed(2, 'c'.repeat(64)))).toBeUndefined();
  });
});
