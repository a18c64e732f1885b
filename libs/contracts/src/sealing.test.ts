import type { z } from 'zod';
import { domainEventSchema, webhookChangedSchema } from './events';
import { EVENT_SEALING, openableSubjectsOf, sealedSubjectOf } from './sealing';

/** Every event the log holds: the domain's, and the notifier's webhook changes. */
const EVENT_SCHEMAS = [...domainEventSchema.options, webhookChangedSchema];

/**
 * Names of data fields that hold personal data or an organization's own data (decision 56): a name,
 * a contact field, an address or an allow list, who made a change, a note, a score. A new field named
 * so must be sealed, or this list be told why not.
 */
const PERSONAL_OR_OWN = /name|address|cidr|email|phone|contact|audit|actor|createdBy|decidedBy|note|items|score|grade|pillar/i;
/** Fields so named that stay in clear, and why: a score's date orders an organization's scores, like every instant. */
const IN_CLEAR = ['scoreDate'];

const typeOf = (schema: (typeof EVENT_SCHEMAS)[number]) => (schema.shape.type as z.ZodLiteral<string>).value;
/** The fields of an event's data, in every form it takes (one object, or a union of them). */
const dataFieldsOf = (schema: (typeof EVENT_SCHEMAS)[number]) => {
  const data = schema.shape.data as z.ZodObject | z.ZodUnion<z.ZodObject[]>;
  const forms = 'options' in data ? data.options : [data];
  return [...new Set(forms.flatMap((form) => Object.keys(form.shape)))];
};

describe('what the event log seals (decision 56)', () => {
  it('when an event type is in the log, then it has a sealing declaration, and every declaration is of a type in the log', () => {
    const types = EVENT_SCHEMAS.map(typeOf);

    expect(types.filter((type) => !EVENT_SEALING[type])).toEqual([]);
    expect(Object.keys(EVENT_SEALING).filter((type) => !types.includes(type))).toEqual([]);
  });

  it('when a field of an event names a person, an address, who made a change or a score, then it is sealed for a subject', () => {
    const unsealed = EVENT_SCHEMAS.flatMap((schema) => {
      const declaration = EVENT_SEALING[typeOf(schema)]!;
      const sealed = [...declaration.organization, ...Object.keys(declaration.recipient)];
      return dataFieldsOf(schema)
        .filter((field) => PERSONAL_OR_OWN.test(field) && !IN_CLEAR.includes(field) && !sealed.includes(field))
        .map((field) => `${typeOf(schema)}: ${field}`);
    });

    expect(unsealed).toEqual([]);
  });

  it('when a field is declared sealed, then the event has it, and its subject is named by a field left in clear', () => {
    for (const schema of EVENT_SCHEMAS) {
      const declaration = EVENT_SEALING[typeOf(schema)]!;
      const fields = dataFieldsOf(schema);
      const sealed = [...declaration.organization, ...Object.keys(declaration.recipient)];
      expect({ type: typeOf(schema), missing: sealed.filter((field) => !fields.includes(field)) }).toEqual({
        type: typeOf(schema),
        missing: [],
      });
      const ids = ['organizationId', 'clientId', 'accountId', 'recipientAccountId'].filter((id) => fields.includes(id));
      expect(ids.filter((id) => sealed.includes(id))).toEqual([]);
      if (declaration.organization.length > 0) expect(fields).toContain('organizationId');
      if (Object.keys(declaration.recipient).length > 0)
        expect(fields.some((field) => ['clientId', 'accountId'].includes(field))).toBe(true);
    }
  });

  it("when an event is about a grant, then its recipient's data is the grant's, whoever holds it; an account's own event's is the account's", () => {
    expect(sealedSubjectOf('recipient', { organizationId: 'o', clientId: 'c', recipientAccountId: 'acc_1' })).toBe('grant:c');
    expect(sealedSubjectOf('recipient', { accountId: 'acc_2' })).toBe('account:acc_2');
    expect(sealedSubjectOf('recipient', { organizationId: 'o', clientId: 'c', recipientAccountId: null })).toBe('grant:c');
    // A part written under the holding account (the rule before) still opens.
    expect(openableSubjectsOf('recipient', { organizationId: 'o', clientId: 'c', recipientAccountId: 'acc_1' })).toEqual([
      'grant:c',
      'account:acc_1',
    ]);
    expect(openableSubjectsOf('organization', { accountId: 'acc_2' })).toEqual([]);
    expect(sealedSubjectOf('organization', { organizationId: 'o', clientId: 'c' })).toBe('organization:o');
    expect(sealedSubjectOf('organization', { accountId: 'acc_2' })).toBeUndefined();
  });
});
