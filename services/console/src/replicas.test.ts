import { request } from '@rsd/testkit';
import { startConsole, type ConsoleHarness } from './testing/console-harness';

// Decision 51: sessions survive the loss of a console replica, with no store behind them.

let h: ConsoleHarness;
beforeEach(async () => {
  h = await startConsole();
});
afterEach(() => h.close());

const cookieOf = (response: { headers: Headers }) =>
  /rsd_console=([^;]+)/.exec(response.headers.getSetCookie().find((line) => line.startsWith('rsd_console=')) ?? '')?.[1];

test('when the replica that signed a person in is lost, then another replica with the same key serves the session and its changes', async () => {
  const [first, second] = [await h.startReplica(), await h.startReplica()];
  const link = await h.signInLink('acme', 'Ada');
  const signedIn = await request<string>(`${first.baseUrl}/console/sign-in/link?token=${link}`, { redirect: 'manual' });
  const session = cookieOf(signedIn) ?? '';
  const form = await request<string>(`${first.baseUrl}/console/authorizations/new`, { headers: { cookie: `rsd_console=${session}` } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  expect([signedIn.status, form.status]).toEqual([303, 200]);

  await first.close();

  const list = await request<string>(`${second.baseUrl}/console`, { headers: { cookie: `rsd_console=${session}` } });
  expect(list.status).toBe(200);
  expect(list.body).toContain('Signed in as <strong>Ada</strong>');
  // The form the lost replica served is accepted by the other: the change reaches the credentials service.
  const created = await request<string>(`${second.baseUrl}/console/authorizations`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `rsd_console=${session}`, origin: second.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, recipientType: 'auditor', scopes: 'qr_score', keyDelivery: 'response' }).toString(),
  });
  expect(created.status).toBe(201);
  expect(await h.store.list('acme')).toHaveLength(1);
});

test('when a console holds another session key, then it opens no session of this one: the key is the whole trust', async () => {
  const link = await h.signInLink('acme', 'Ada');
  const session = cookieOf(await request(`${h.app.baseUrl}/console/sign-in/link?token=${link}`, { redirect: 'manual' })) ?? '';
  const other = await startConsole();
  try {
    const elsewhere = await request<string>(`${other.app.baseUrl}/console`, { headers: { cookie: `rsd_console=${session}` } });
    expect(elsewhere.body).toContain('<h1>Sign in</h1>');
    expect((await request<string>(`${h.app.baseUrl}/console`, { headers: { cookie: `rsd_console=${session}` } })).body).toContain(
      'Signed in as',
    );
  } finally {
    await other.close();
  }
});
