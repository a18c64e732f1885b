// The resources as the OpenAPI documents define them (libs/contracts in the repository), written out
// again because recipients install this package alone.

export type Grade = 'Sustain' | 'Optimize' | 'Strengthen' | 'Improve' | 'Prioritize';

export interface PillarScores {
  structuralIntegrity: number;
  failureResistance: number;
  deviceHealth: number;
  recoveryCapability: number;
}

/** getScore */
export interface Score {
  clientId: string;
  scoreDate: string;
  score: number;
  grade: Grade;
}

/** getPillars: no composite, by specification. */
export interface Pillars {
  clientId: string;
  scoreDate: string;
  pillarScores: PillarScores;
}

/** One entry of listScoreHistory; pillar fields only when the credential also holds pillar_breakdown. */
export interface HistoryItem {
  scoreDate: string;
  score: number;
  grade: Grade;
  pillarScores?: PillarScores;
  /** null for the oldest snapshot there is. */
  change: {
    score: number;
    grade: { from: Grade; to: Grade } | null;
    pillars?: PillarScores;
    driver?: keyof PillarScores | null;
  } | null;
}

export interface HistoryPage {
  clientId: string;
  scores: HistoryItem[];
  nextCursor: string | null;
}

/**
 * What was received, kept so that it can be verified again later, offline, with `verifyEvidence`:
 * the status, the request's path (without the query) and the headers that the signature covers, and
 * the body exactly as received.
 */
export interface Evidence {
  status: number;
  path: string;
  /** Lowercase names. */
  headers: Record<string, string>;
  body: Uint8Array;
}

/** A read API resource as the client returns it. */
export type Served<T> = T & {
  evidence: Evidence;
  /** true when the API answered 304 and this is the representation the client kept. */
  notModified: boolean;
};

/** The document at `/.well-known/jwks.json`. */
export interface Jwks {
  keys: { kty: string; crv: string; x: string; kid: string; alg?: string; use?: string }[];
}

export type WebhookEvent = 'score.updated' | 'grade.changed' | 'authorization.ended';

export interface Webhook {
  id: string;
  url: string;
  events: WebhookEvent[];
  status: 'active' | 'disabled';
  createdAt: string;
}

/** createWebhook's answer: the only one that carries the secret. */
export interface CreatedWebhook extends Webhook {
  secret: string;
}

export interface WebhookDelivery {
  messageId: string;
  eventType: WebhookEvent;
  attempt: number;
  status: 'pending' | 'succeeded' | 'failed';
  responseCode: number | null;
  failure: 'response_status' | 'timeout' | 'connection_failed' | 'target_not_allowed' | null;
  scheduledAt: string;
  attemptedAt: string | null;
}

/** A Standard Webhooks delivery's body; `data` never holds more than the authorization's scopes allow. */
export type WebhookPayload =
  | {
      type: 'score.updated';
      timestamp: string;
      data: { clientId: string; scoreDate: string; score: number; grade: Grade; pillarScores?: PillarScores };
    }
  | { type: 'grade.changed'; timestamp: string; data: { clientId: string; scoreDate: string; from: Grade; to: Grade } }
  | { type: 'authorization.ended'; timestamp: string; data: { clientId: string; reason: 'revoked' | 'expired'; endedAt: string } };
