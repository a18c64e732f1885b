import { EVENT_TYPES } from '@rsd/contracts';
import { probingCipher, rewrittenValue } from './log-rewrite';
import type { EventCipher } from './sealed-events';

const score = (data: Record<string, unknown>) => JSON.stringify({ specversion: '1.0', id: 'e1', type: EVENT_TYPES.scoreCalculated, data });
const erasing: EventCipher = {
  ...probingCipher,
  seal: (subject) => Promise.resolve({ status: 'erased', subject, destroyedAt: '2026-12-01T00:00:00.000Z' }),
};

describe('rewrittenValue: one record of a log written before sealing (decision 56)', () => {
  it.each([
    ['an event in clear', score({ organizationId: 'acme', score: 83 }), 'sealed'],
    ['an event sealed already', JSON.stringify({ type: EVENT_TYPES.scoreCalculated, rsdsealed: 1, data: {} }), 'already-sealed'],
    ['a record that is not JSON', 'not JSON', 'nothing-to-seal'],
    [
      'an erasure event (ids and an instant)',
      JSON.stringify({ type: EVENT_TYPES.organizationOffboarded, data: { organizationId: 'acme' } }),
      'nothing-to-seal',
    ],
    ['an event naming no organization for its score', score({ score: 83 }), 'unsealable'],
  ])('when it is %s, then it is rewritten as it says', async (_what, value, outcome) => {
    const rewritten = await rewrittenValue(value, probingCipher);
    expect(rewritten.outcome).toBe(outcome);
    expect(rewritten.value === value).toBe(outcome !== 'sealed');
  });

  it("when a dead letter keeps an event in clear, then that copy is sealed and the letter's reason and position kept", async () => {
    const letter = {
      reason: 'refused',
      topic: 'rsd.scores.v1',
      partition: 2,
      offset: '7',
      key: 'acme',
      value: score({ organizationId: 'acme', score: 83 }),
    };
    const rewritten = await rewrittenValue(JSON.stringify(letter), probingCipher, { deadLetter: true });
    expect(rewritten.outcome).toBe('sealed');
    const { value, ...kept } = JSON.parse(rewritten.value) as typeof letter;
    expect(kept).toEqual({ reason: 'refused', topic: 'rsd.scores.v1', partition: 2, offset: '7', key: 'acme' });
    expect(value).not.toContain('"score":83');
    expect((await rewrittenValue('not JSON', probingCipher, { deadLetter: true })).outcome).toBe('nothing-to-seal');
  });

  it('when the subject is erased, then the event is written erased; a subject refused is unsealable; a key store failing is thrown', async () => {
    const erased = await rewrittenValue(score({ organizationId: 'acme', score: 83 }), erasing);
    expect(erased.outcome).toBe('erased');
    expect(erased.value).not.toContain('83');
    const refusing: EventCipher = { ...probingCipher, seal: () => Promise.reject(new TypeError('a subject is organization:<id>, …')) };
    expect((await rewrittenValue(score({ organizationId: 'a c m e', score: 83 }), refusing)).outcome).toBe('unsealable');
    const failing: EventCipher = { ...probingCipher, seal: () => Promise.reject(new Error('key store away')) };
    await expect(rewrittenValue(score({ organizationId: 'acme', score: 83 }), failing)).rejects.toThrow('key store away');
  });
});
