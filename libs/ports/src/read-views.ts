import type { AuthorizationStatus, CalculatedScore, Scope } from '@rsd/contracts';

/** What the read API knows of a credential, projected from authorization events. */
export interface CredentialView {
  clientId: string;
  organizationId: string;
  keyDigest: string;
  scopes: Scope[];
  status: AuthorizationStatus;
  expiresAt: string | null;
  revision: number;
}

/** Every update is guarded by revision, so duplicates and replays change nothing. */
export interface CredentialViews {
  get(clientId: string): Promise<CredentialView | undefined>;
  /** Stores the view unless one with the same or a newer revision is already there. */
  put(view: CredentialView): Promise<void>;
  /** Sets the status if the stored revision is older than `revision`; ignored for an unknown Client ID. */
  setStatus(clientId: string, status: AuthorizationStatus, revision: number): Promise<void>;
}

/**
 * Scores per organization. The latest is the one with the greatest scoreDate; for the same date a
 * later calculatedAt replaces an earlier one; a late score for an older date goes to history only.
 */
export interface ScoreViews {
  record(score: CalculatedScore): Promise<void>;
  latest(organizationId: string): Promise<CalculatedScore | undefined>;
  /** One entry per scoreDate (its latest calculation), newest date first. */
  history(organizationId: string, limit: number): Promise<CalculatedScore[]>;
}

export interface ReadViews {
  credentials: CredentialViews;
  scores: ScoreViews;
  close(): Promise<void>;
}

/** Whether `candidate` should replace `current` as the score for its date or as the latest. */
export function supersedes(candidate: CalculatedScore, current: CalculatedScore | undefined): boolean {
  if (!current) return true;
  if (candidate.scoreDate !== current.scoreDate) return candidate.scoreDate > current.scoreDate;
  return Date.parse(candidate.calculatedAt) > Date.parse(current.calculatedAt);
}
