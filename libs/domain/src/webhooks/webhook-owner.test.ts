import { deliveryAllowList, grantOfQueuedDelivery, webhookOwnerKey } from './webhook-owner';

const GRANT = 'rs_7Qm2ZkP9xW4nTcL8vB3d';
const OTHER = 'rs_Rf6YhJ2kL9mN4pQ8sT1v';
const portfolio = webhookOwnerKey({ kind: 'portfolio', accountId: 'rcp_AAAAAAAAAAAAAAAAAAAAAAAA' });
const organization = webhookOwnerKey({ kind: 'organization', organizationId: 'acme' });
const scoreOf = (clientId: string) => JSON.stringify({ type: 'score.updated', data: { clientId, score: 70 } });
const testBody = JSON.stringify({ type: 'webhook.test', data: { webhookId: 'wh_7Qm2ZkP9xW4nTcL8vB3dRf6Y' } });

describe('the grant whose data a queued delivery carries', () => {
  test('when the delivery names its grant, then that is the grant, whatever its body says', () => {
    expect(grantOfQueuedDelivery({ clientId: portfolio, body: scoreOf(OTHER), grantClientId: GRANT })).toBe(GRANT);
  });

  test("when it was queued before deliveries named their grant, then a grant's webhook's is the grant and a portfolio's is the one its body names", () => {
    expect(grantOfQueuedDelivery({ clientId: GRANT, body: testBody })).toBe(GRANT);
    expect(grantOfQueuedDelivery({ clientId: portfolio, body: scoreOf(OTHER) })).toBe(OTHER);
    expect(grantOfQueuedDelivery({ clientId: portfolio, body: testBody })).toBeUndefined();
  });
});

describe('the allow list that bounds a delivery', () => {
  const limited = { allowedCidrs: ['203.0.113.0/24'] };

  test("when a delivery carries a limited grant's data, to its own webhook or to a portfolio's, then the grant's ranges bound it", () => {
    expect(deliveryAllowList(GRANT, limited)).toEqual(['203.0.113.0/24']);
    expect(deliveryAllowList(portfolio, limited)).toEqual(['203.0.113.0/24']);
  });

  test('when the grant has no allow list, then nothing bounds it', () => {
    expect(deliveryAllowList(GRANT, { allowedCidrs: null })).toBeNull();
    expect(deliveryAllowList(portfolio, {})).toBeNull();
  });

  test("when it carries no grant's data (a portfolio's test) or is an organization's alert about a limited grant, then nothing bounds it", () => {
    expect(deliveryAllowList(portfolio, undefined)).toBeNull();
    expect(deliveryAllowList(organization, limited)).toBeNull();
  });
});
