import type { ScoreSubmission } from '@rsd/contracts';
import { request } from '@rsd/testkit';

/*
 * What an organization's administrator (or its scoring engine) does over HTTP with a bearer token,
 * on any runtime: each call asserts the status the API promises for it.
 */

/** A recipient's credential as the credentials service issues it. */
export interface IssuedCredential {
  clientId: string;
  apiKey: string;
}

const postWithBearer = <T>(url: string, token: string, body: object) =>
  request<T>(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** POST /v1/organizations/{org}/authorizations: 201, and the credential it issued (its key shown this once). */
export async function createAuthorization<T extends IssuedCredential = IssuedCredential>(
  credentialsUrl: string,
  org: string,
  token: string,
  body: object,
): Promise<T> {
  const answer = await postWithBearer<T>(`${credentialsUrl}/v1/organizations/${org}/authorizations`, token, body);
  expect(answer.status).toBe(201);
  return answer.body;
}

/** POST /v1/scores: 202. */
export async function postScore(scoreIngestUrl: string, token: string, submission: ScoreSubmission): Promise<void> {
  const answer = await postWithBearer(`${scoreIngestUrl}/v1/scores`, token, submission);
  expect(answer.status).toBe(202);
}

/** POST /v1/organizations/{org}/authorizations/{clientId}/erasure (decision 56: the grant's recipient erased): 202. */
export async function eraseRecipient(credentialsUrl: string, org: string, token: string, clientId: string): Promise<void> {
  const answer = await postWithBearer(`${credentialsUrl}/v1/organizations/${org}/authorizations/${clientId}/erasure`, token, {});
  expect(answer.status).toBe(202);
}
