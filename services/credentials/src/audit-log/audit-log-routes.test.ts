import type { AuditLogEntry } from '@rsd/contracts';
import { anAuditRecord, parseCsvIndependently, parseNdjson, request, signToken } from '@rsd/testkit';
import { NOW, startCredentials, type CredentialsHarness } from '../../../../test/support/credentials-harness';

const ORG = 'acme';

describe('credentials service: the audit trail (decision 54)', () => {
  let h: CredentialsHarness;
  let writer: string;

  const url = (query = '', org = ORG) => `${h.app.baseUrl}/v1/organizations/${org}/audit-log${query}`;
  const auditLog = (query = '', headers: Record<string, string> = {}, bearer = writer) =>
    request(url(query), { headers: { authorization: `Bearer ${bearer}`, ...headers } });
  const post = (path: string, body: object, bearer = writer, agent?: string) =>
    request(`${h.app.baseUrl}/v1/organizations/${ORG}/authorizations${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': 'application/json',
        'x-request-id': `req-${path.length}-${Math.round(Math.random() * 1e9)}`,
        ...(agent ? { 'user-agent': agent } : {}),
      },
      body: JSON.stringify(body),
    });

  beforeEach(async () => {
    h = await startCredentials();
    writer = await signToken({ org: ORG, scope: 'authorizations:write', sub: 'alice' });
  });

  afterEach(() => h.close());

  test('when a person creates, rotates and revokes through the CLI and a service revokes through the API, then each change is one entry, newest first, with its actor', async () => {
    const robot = await signToken({ org: ORG, scope: 'authorizations:write', sub: 'ci-bot', client_id: 'ci-bot' });
    // A second apart: entries of one instant are ordered by event id, not by when they were made.
    const later = () => h.clock.set(new Date(h.clock.now().getTime() + 1_000));
    const created = await post('', { recipientType: 'auditor', scopes: ['qr_score'] }, writer, 'rsd-cli/1.0.0');
    const clientId = created.body.clientId as string;
    later();
    const rotated = await post(`/${clientId}/rotate`, {}, writer, 'resilience-score-typescript/0.3.0');
    later();
    const other = await post('', { recipientType: 'partner', scopes: ['qr_score'] });
    later();
    const revoked = await post(`/${other.body.clientId as string}/revoke`, {}, robot);
    expect([created.status, rotated.status, other.status, revoked.status]).toEqual([201, 200, 201, 200]);

    const answer = await auditLog('', {}, await signToken({ org: ORG, scope: 'authorizations:read' }));

    expect(answer.status).toBe(200);
    const items = answer.body.items as AuditLogEntry[];
    expect(items.map(({ action, actor, clientId: id }) => ({ action, actor, clientId: id }))).toEqual([
      { action: 'authorization.revoked', actor: { type: 'service', id: '|ci-bot', via: 'api' }, clientId: other.body.clientId },
      { action: 'authorization.created', actor: { type: 'person', id: '|alice', via: 'api' }, clientId: other.body.clientId },
      { action: 'authorization.key_rotated', actor: { type: 'person', id: '|alice', via: 'sdk' }, clientId },
      { action: 'authorization.created', actor: { type: 'person', id: '|alice', via: 'cli' }, clientId },
    ]);
    expect(items.every((item) => item.address !== null && /^req-/.test(item.requestId ?? ''))).toBe(true);
    expect(JSON.stringify(answer.body)).not.toContain(created.body.apiKey as string);
    expect(answer.body.nextCursor).toBeNull();
  });

  test('when the trail is read with filters and pages, then each entry that matches comes once, and the cursor keeps the filters', async () => {
    const service = { type: 'service', id: 'https://idp.example|ci', via: 'cli' } as const;
    const entries = Array.from({ length: 9 }, (_, n) =>
      anAuditRecord(ORG, 0, {
        at: new Date(NOW.getTime() - (9 - n) * 60_000).toISOString(),
        ...(n % 3 === 0 ? { actor: service, action: 'authorization.revoked' } : {}),
      }),
    );
    await h.auditLog.add([...entries, anAuditRecord('another-org', 0, { actor: service })]);
    const from = entries[1]!.at;
    const pages: AuditLogEntry[][] = [];
    for (let cursor = ''; ;) {
      const answer = await auditLog(`?actor=service&from=${from}&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(answer.status).toBe(200);
      pages.push(answer.body.items as AuditLogEntry[]);
      if (answer.body.nextCursor === null) break;
      cursor = answer.body.nextCursor as string;
    }

    expect(pages.flat().map((item) => item.at)).toEqual([entries[6]!.at, entries[3]!.at]);
    const byClient = await auditLog(`?clientId=${entries[4]!.clientId ?? ''}&to=${new Date(NOW.getTime()).toISOString()}`);
    expect((byClient.body.items as AuditLogEntry[]).map((item) => item.at)).toEqual([entries[4]!.at]);
    const byAction = await auditLog('?action=authorization.revoked&actor=https://idp.example%7Cci');
    expect(byAction.body.items).toHaveLength(3);
  });

  test.each([
    ['?from=yesterday', 'from'],
    ['?to=2026-13-01T00:00:00Z', 'to'],
    ['?from=2026-11-20T00:00:00Z&to=2026-11-19T00:00:00Z', 'from must be before to'],
    ['?action=authorization.deleted', 'action'],
    ['?clientId=nope', 'clientId'],
    ['?limit=501', 'limit'],
    ['?limit=0', 'limit'],
    ['?cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ['?actor=a&actor=b', 'actor'],
  ])('when the query is %s, then 400 INVALID_PARAMETER names %s', async (query, named) => {
    const answer = await auditLog(query);

    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'INVALID_PARAMETER' });
    expect(answer.body.message).toContain(named);
  });

  test('when the token is for another organization or lacks both scopes, then 403', async () => {
    const foreign = await auditLog('', {}, await signToken({ org: 'globex', scope: 'authorizations:read' }));
    const unscoped = await auditLog('', {}, await signToken({ org: ORG, scope: 'scores:write' }));

    expect([foreign.status, foreign.body.code, unscoped.status, unscoped.body.code]).toEqual([
      403,
      'FORBIDDEN_ORGANIZATION',
      403,
      'INSUFFICIENT_SCOPE',
    ]);
  });

  test('when the trail is asked for as CSV and as NDJSON, then every matching entry is there, cells a spreadsheet would run are defused, and an independent parser reads it', async () => {
    const hostile = anAuditRecord(ORG, 0, {
      at: new Date(NOW.getTime() - 1_000).toISOString(),
      actor: { type: 'person', id: '=HYPERLINK("http://evil.example","x"),\n+1', via: 'api' },
      address: '@SUM(1)',
    });
    const entries = [
      ...Array.from({ length: 1_203 }, (_, n) => anAuditRecord(ORG, 0, { at: new Date(NOW.getTime() - 10_000 - n * 1_000).toISOString() })),
      hostile,
    ];
    for (let at = 0; at < entries.length; at += 300) await h.auditLog.add(entries.slice(at, at + 300));

    const csv = await auditLog('', { accept: 'text/csv' });
    const ndjson = await fetch(url(), { headers: { authorization: `Bearer ${writer}`, accept: 'application/x-ndjson' } });

    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = parseCsvIndependently(csv.body as string);
    expect(rows[0]).toEqual(['at', 'action', 'actorType', 'actorId', 'actorVia', 'requestId', 'address', 'clientId']);
    expect(rows).toHaveLength(1 + 1_204);
    expect(rows[1]).toEqual([
      hostile.at,
      hostile.action,
      'person',
      `'${hostile.actor.id}`,
      'api',
      hostile.requestId,
      "'@SUM(1)",
      hostile.clientId,
    ]);
    expect(ndjson.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = parseNdjson(await ndjson.text()) as AuditLogEntry[];
    expect(lines).toHaveLength(1_204);
    expect(lines[0]).toEqual({
      at: hostile.at,
      action: hostile.action,
      actor: hostile.actor,
      requestId: hostile.requestId,
      address: '@SUM(1)',
      clientId: hostile.clientId,
    });
    expect(lines.map((line) => line.at)).toEqual(rows.slice(1).map((row) => row[0]));
  });
});
