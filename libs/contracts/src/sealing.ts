import { EVENT_TYPES, WEBHOOK_CHANGED_EVENT_TYPE } from './events';

/*
 * Decision 56's crypto-shredding, as the event log sees it: which fields of each event are sealed
 * (encrypted with the key of their data subject) when the event is written to the log, and for which
 * subject. What stays plaintext is what routing and ordering need: the envelope (type, id, times),
 * the ids (organization, grant, account, review, alert, webhook), the revisions and the instants.
 */

/** Whose key seals a field: the organization's, or the recipient's (its grant's, else its account's). */
export type SealedSubjectKind = 'organization' | 'recipient';

/**
 * One event type's sealed fields (top-level members of its `data`). A recipient's field names what it
 * becomes once the recipient is erased: `null` (the schema's "none"), or `undefined` (left out: the
 * field is optional). An organization's erasure is its offboarding: its events are then skipped whole.
 */
export interface SealingDeclaration {
  readonly organization: readonly string[];
  readonly recipient: Readonly<Record<string, null | undefined>>;
}

/** The CloudEvents extension attribute that marks a sealed event, with the sealed format's version (1). */
export const SEALED_ATTRIBUTE = 'rsdsealed';
export const SEALED_EVENT_VERSION = 1;
/** The member of a sealed event's `data` holding its sealed parts, one per subject. */
export const SEALED_MEMBER = 'sealed';

const none: SealingDeclaration['recipient'] = {};
/** Who made a change and from where (decision 54's audit stamp): an organization's record. */
const AUDIT = 'audit';

/**
 * Every event type of the log and what it seals. A type with nothing personal and nothing of an
 * organization's own still has its entry (empty), so a new type cannot be added without a decision.
 */
export const EVENT_SEALING: Readonly<Record<string, SealingDeclaration>> = {
  [EVENT_TYPES.authorizationCreated]: { organization: ['allowedCidrs', AUDIT], recipient: { recipientName: null } },
  [EVENT_TYPES.authorizationJoinedAccount]: { organization: ['allowedCidrs', AUDIT], recipient: none },
  [EVENT_TYPES.authorizationRevoked]: { organization: [AUDIT], recipient: none },
  [EVENT_TYPES.authorizationExpired]: { organization: [AUDIT], recipient: none },
  [EVENT_TYPES.authorizationKeyRotated]: { organization: [AUDIT], recipient: none },
  [EVENT_TYPES.authorizationKeyClaimed]: { organization: [AUDIT], recipient: none },
  [EVENT_TYPES.authorizationPreviousKeyRevoked]: { organization: [AUDIT], recipient: none },
  // A recipient account belongs to no organization: its own name and its own changes are its own.
  [EVENT_TYPES.recipientAccountCreated]: { organization: [], recipient: { name: null, audit: undefined } },
  [EVENT_TYPES.recipientAccountKeyRotated]: { organization: [], recipient: { audit: undefined } },
  [EVENT_TYPES.recipientAccountKeyRevoked]: { organization: [], recipient: { audit: undefined } },
  // The address an alert saw is the recipient's (decision 56: "the addresses seen for it").
  [EVENT_TYPES.authorizationAlerted]: { organization: [], recipient: { address: undefined } },
  // A review's items are the organization's record of its grants at the time, names included.
  [EVENT_TYPES.accessReviewCreated]: { organization: ['items', 'createdBy', AUDIT], recipient: none },
  [EVENT_TYPES.accessReviewItemDecided]: { organization: ['note', 'decidedBy', AUDIT], recipient: none },
  [EVENT_TYPES.accessReviewCompleted]: { organization: [AUDIT], recipient: none },
  [EVENT_TYPES.accessReviewDueSoon]: { organization: [], recipient: none },
  [EVENT_TYPES.scoreCalculated]: { organization: ['score', 'grade', 'pillarScores'], recipient: none },
  // The erasures themselves, in clear (ids and an instant): a process that reads one forgets the erased keys at once.
  [EVENT_TYPES.organizationOffboarded]: { organization: [], recipient: none },
  [EVENT_TYPES.recipientErased]: { organization: [], recipient: none },
  [WEBHOOK_CHANGED_EVENT_TYPE]: { organization: [AUDIT], recipient: none },
};

/** The data of a sealed event as far as choosing its subjects goes. */
export interface SubjectIds {
  organizationId?: unknown;
  clientId?: unknown;
  accountId?: unknown;
  recipientAccountId?: unknown;
}

/**
 * The subject of one kind for an event's data, as a sealed part is written: `organization:<id>`; for
 * the recipient, its grant's (`grant:<clientId>`) when the event is about one grant, whoever holds it,
 * else its account's (`account:<id>`: the account's own events). An organization then erases what is
 * its grant's alone, never the account, which holds other organizations' grants (decision 56).
 * Undefined when the data names no such subject.
 */
export function sealedSubjectOf(kind: SealedSubjectKind, data: SubjectIds): string | undefined {
  return openableSubjectsOf(kind, data)[0];
}

/**
 * Every subject a sealed part of this kind may name for an event's data, the one it is written under
 * first. A recipient's part of a grant's event may also name the account the event names: sealing
 * chose the holding account before it chose the grant, and such parts still open.
 */
export function openableSubjectsOf(kind: SealedSubjectKind, data: SubjectIds): string[] {
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  if (kind === 'organization') {
    const organizationId = text(data.organizationId);
    return organizationId ? [`organization:${organizationId}`] : [];
  }
  const clientId = text(data.clientId);
  const accountId = text(data.accountId) ?? text(data.recipientAccountId);
  return [...(clientId ? [`grant:${clientId}`] : []), ...(accountId ? [`account:${accountId}`] : [])];
}
