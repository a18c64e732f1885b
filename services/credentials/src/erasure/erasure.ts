import {
  EVENT_TYPES,
  newEvent,
  TOPICS,
  type DomainEvent,
  type Erasure,
  type OrganizationOffboarded,
  type RecipientErased,
} from '@rsd/contracts';
import {
  EVENT_SOURCE,
  accountSubject,
  grantSubject,
  organizationSubject,
  startedOffboarding,
  withoutRecipientData,
  type OffboardingRecord,
  type StoredAuthorization,
} from '@rsd/domain';
import { runCommand } from '@rsd/platform';
import type { AccessLogStore, AuditLogStore, EventLog, OffboardingStore, SubjectKeyStore } from '@rsd/ports';
import { revokeCommand } from '../authorizations/revoke-authorization';
import type { UseCaseDeps } from '../authorizations/use-case-deps';

/** What decision 56's use cases need beside the authorizations' own. */
export interface ErasureDeps extends UseCaseDeps {
  eventLog: Pick<EventLog, 'append'>;
  offboardings: Pick<OffboardingStore, 'start' | 'find'>;
  subjectKeys: Pick<SubjectKeyStore, 'destroy'>;
  accessLog: Pick<AccessLogStore, 'eraseAddresses'>;
  auditLog: Pick<AuditLogStore, 'eraseAddresses'>;
}

/**
 * Decision 56: offboards the organization, in an order that can be taken up again from any step: its
 * record (pending), every grant revoked (`organization_offboarded`: its event, webhooks and audit entry
 * as any revocation), those revocations published, its key destroyed with each of its grants' own
 * (`grant:<clientId>`: what a grant's recipient left under it belongs to that grant, which is revoked
 * for good; a recipient account's key stays, the account being its own and holding other grants), then
 * `organization.offboarded`, on which every service purges. Asked again while pending, it does every
 * step again (each is idempotent); once done, it answers the record.
 */
export async function offboardOrganization(deps: ErasureDeps, organizationId: string): Promise<OffboardingRecord> {
  const now = deps.clock.now();
  const record = await deps.offboardings.start(startedOffboarding(organizationId, now), now);
  if (record.doneAt !== null) return record;
  const grants = await deps.store.list(organizationId);
  for (const grant of grants) {
    await runCommand(deps, deps.origin, revokeCommand(deps, organizationId, grant.clientId, 'organization_offboarded'));
  }
  // Every revocation is in the log before anything is purged: the read API refuses the keys first.
  await deps.relay.flush();
  await deps.subjectKeys.destroy(organizationSubject(organizationId), now.toISOString());
  for (const grant of grants) await deps.subjectKeys.destroy(grantSubject(grant.clientId), now.toISOString());
  await append(
    deps,
    newEvent<OrganizationOffboarded>({
      id: deps.newEventId(),
      source: EVENT_SOURCE,
      time: now,
      type: EVENT_TYPES.organizationOffboarded,
      data: { organizationId, startedAt: record.startedAt },
    }),
  );
  return record;
}

/**
 * Decision 56: one grant's recipient erased, on the organization's word: the grant's own key destroyed
 * (`grant:<clientId>`, under which every event about the grant seals its recipient's data, whoever holds
 * it), never an account's: an account holding the grant keeps its name, its own changes and its other
 * organizations' grants. The grant is kept without its name or any address (at the next revision, though
 * no event carries it, so that a change made from a copy read before cannot write the name back), the
 * addresses go from its access log and audit entries, then `recipient.erased`, on which the views drop
 * the name.
 */
export async function eraseRecipient(deps: ErasureDeps, grant: StoredAuthorization): Promise<Erasure> {
  const now = deps.clock.now();
  const subject = await eraseGrant(deps, grant, now);
  return { subject, erasedAt: now.toISOString() };
}

/**
 * Decision 56: a recipient account's own erasure: its key (`account:<id>`: its name and its own
 * changes) and its name, then each grant it holds as the grant's organization would erase it, then
 * `recipient.erased` for the account itself, on which the views forget its name (also when it holds no
 * grant).
 */
export async function eraseAccount(deps: ErasureDeps, accountId: string): Promise<Erasure> {
  const now = deps.clock.now();
  const subject = accountSubject(accountId);
  await deps.subjectKeys.destroy(subject, now.toISOString());
  for (let tries = 0; tries < 5; tries += 1) {
    const account = await deps.store.findAccount(accountId);
    if (!account || account.name === null) break;
    if (await deps.store.updateAccount({ ...account, name: null, revision: account.revision + 1 }, account.revision, [])) break;
  }
  for (const grant of await deps.store.listHeldByAccount(accountId)) await eraseGrant(deps, grant, now);
  await append(deps, erasedEvent(deps, now, { accountId, subject }));
  return { subject, erasedAt: now.toISOString() };
}

/** A grant's recipient data erased: the grant's key, its record's name and addresses, its logs' addresses; answers the subject destroyed. */
async function eraseGrant(deps: ErasureDeps, grant: StoredAuthorization, now: Date): Promise<string> {
  const subject = grantSubject(grant.clientId);
  await deps.subjectKeys.destroy(subject, now.toISOString());
  // A concurrent change wins the record: read it again and erase what it holds then.
  for (let current: StoredAuthorization | undefined = grant, tries = 0; current && tries < 5; tries += 1) {
    if (await deps.store.update({ ...withoutRecipientData(current), revision: current.revision + 1 }, current.revision, [])) break;
    current = await deps.store.find(grant.organizationId, grant.clientId);
  }
  await deps.accessLog.eraseAddresses(grant.clientId);
  await deps.auditLog.eraseAddresses(grant.organizationId, grant.clientId);
  await append(deps, erasedEvent(deps, now, { organizationId: grant.organizationId, clientId: grant.clientId, subject }));
  return subject;
}

function erasedEvent(deps: Pick<ErasureDeps, 'newEventId'>, now: Date, data: RecipientErased['data']): RecipientErased {
  return newEvent<RecipientErased>({ id: deps.newEventId(), source: EVENT_SOURCE, time: now, type: EVENT_TYPES.recipientErased, data });
}

/** Straight to the log, not through the outbox: nothing is stored with these events, and each step is asked again until it holds. */
function append(deps: Pick<ErasureDeps, 'eventLog'>, event: DomainEvent): Promise<void> {
  return deps.eventLog.append(TOPICS.authorizations, [{ key: event.subject, value: JSON.stringify(event) }]);
}
