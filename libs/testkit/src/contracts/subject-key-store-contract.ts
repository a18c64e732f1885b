import type { SubjectKeyStore } from '@rsd/ports';
import { uniqueName } from './eventually';
import { describeStoreContract, type StoreFixture } from './per-test';

export type SubjectKeyStoreFixture = StoreFixture<SubjectKeyStore>;

const CREATED = '2026-12-02T10:00:00.000Z';
const DESTROYED = '2026-12-02T11:00:00.000Z';
const candidate = (wrappedKey: string) => ({ wrappedKey, createdAt: CREATED });

/** Decision 56: what every subject key store must do; an erasure rests on a destroyed key staying destroyed. */
export function describeSubjectKeyStoreContract(name: string, factory: () => Promise<SubjectKeyStoreFixture>): void {
  describeStoreContract(`SubjectKeyStore contract: ${name}`, factory, (store) => {
    it('when a subject asks for its key twice, then the first candidate is its key and the second is not stored', async () => {
      const subject = uniqueName('organization:acme');

      expect(await store.read(subject)).toBeUndefined();
      expect(await store.getOrCreate(subject, candidate('wrapped-1'))).toEqual({
        state: 'active',
        subject,
        wrappedKey: 'wrapped-1',
        createdAt: CREATED,
      });
      expect(await store.getOrCreate(subject, candidate('wrapped-2'))).toMatchObject({ wrappedKey: 'wrapped-1' });
      expect(await store.read(subject)).toMatchObject({ state: 'active', wrappedKey: 'wrapped-1' });
    });

    it('when several callers create one subject key at once, then all are answered with the same one', async () => {
      const subject = uniqueName('account:a');

      const keys = await Promise.all(Array.from({ length: 8 }, (_, index) => store.getOrCreate(subject, candidate(`wrapped-${index}`))));

      const wrapped = new Set(keys.map((key) => (key.state === 'active' ? key.wrappedKey : key.state)));
      expect(wrapped.size).toBe(1);
      expect(await store.read(subject)).toMatchObject({ state: 'active', wrappedKey: [...wrapped][0] });
    });

    it('when a key is destroyed, then it reads destroyed, a second destruction keeps the first instant, and no new key is ever made', async () => {
      const subject = uniqueName('organization:acme');
      await store.getOrCreate(subject, candidate('wrapped-1'));

      expect(await store.destroy(subject, DESTROYED)).toEqual({ state: 'destroyed', subject, destroyedAt: DESTROYED });
      expect(await store.destroy(subject, '2026-12-03T00:00:00.000Z')).toEqual({ state: 'destroyed', subject, destroyedAt: DESTROYED });
      expect(await store.read(subject)).toEqual({ state: 'destroyed', subject, destroyedAt: DESTROYED });
      expect(await store.getOrCreate(subject, candidate('wrapped-2'))).toEqual({ state: 'destroyed', subject, destroyedAt: DESTROYED });
      expect(JSON.stringify(await store.read(subject))).not.toContain('wrapped');
    });

    it('when a subject that never had a key is destroyed, then it never gets one', async () => {
      const subject = uniqueName('account:a');

      await store.destroy(subject, DESTROYED);

      expect(await store.getOrCreate(subject, candidate('wrapped-1'))).toEqual({ state: 'destroyed', subject, destroyedAt: DESTROYED });
    });

    it('when one subject is destroyed, then the others keep their keys', async () => {
      const [erased, kept] = [uniqueName('organization:acme'), uniqueName('organization:acme')];
      await store.getOrCreate(erased, candidate('wrapped-erased'));
      await store.getOrCreate(kept, candidate('wrapped-kept'));

      await store.destroy(erased, DESTROYED);

      expect(await store.read(kept)).toMatchObject({ state: 'active', wrappedKey: 'wrapped-kept' });
    });
    it('when the store is listed in pages, then every key and tombstone comes once, in the order of the subjects', async () => {
      const prefix = uniqueName('organization:list');
      const subjects = Array.from({ length: 5 }, (_, index) => `${prefix}-${index}`);
      for (const subject of subjects) await store.getOrCreate(subject, candidate(`wrapped-${subject}`));
      await store.destroy(subjects[2]!, DESTROYED);

      const listed = [];
      for (let after: string | undefined, page; (page = await store.list(after, 2)).length > 0; after = page[page.length - 1]!.subject) {
        expect(page.length).toBeLessThanOrEqual(2);
        listed.push(...page);
      }

      const ours = listed.filter((key) => key.subject.startsWith(prefix));
      expect(ours.map((key) => key.subject)).toEqual(subjects);
      expect(ours[2]).toEqual({ state: 'destroyed', subject: subjects[2], destroyedAt: DESTROYED });
      expect(ours[0]).toEqual({ state: 'active', subject: subjects[0], wrappedKey: `wrapped-${subjects[0]}`, createdAt: CREATED });
      const order = listed.map((key) => key.subject);
      expect(order).toEqual([...order].sort());
    });

    it('when a key is re-wrapped from what it holds, then it holds the new wrapping; from anything else, it is left as it is', async () => {
      const subject = uniqueName('grant:rs');
      await store.getOrCreate(subject, candidate('wrapped-old'));

      expect(await store.rewrap(subject, 'wrapped-other', 'wrapped-new')).toBe(false);
      expect(await store.read(subject)).toMatchObject({ wrappedKey: 'wrapped-old' });
      expect(await store.rewrap(subject, 'wrapped-old', 'wrapped-new')).toBe(true);
      expect(await store.read(subject)).toEqual({ state: 'active', subject, wrappedKey: 'wrapped-new', createdAt: CREATED });
      expect(await store.rewrap(subject, 'wrapped-old', 'wrapped-newer')).toBe(false);
      expect(await store.rewrap(uniqueName('grant:none'), 'wrapped-old', 'wrapped-new')).toBe(false);
    });

    it('when a destroyed key is re-wrapped, then it stays destroyed and nothing of the new wrapping is stored', async () => {
      const subject = uniqueName('account:a');
      await store.getOrCreate(subject, candidate('wrapped-old'));
      await store.destroy(subject, DESTROYED);

      expect(await store.rewrap(subject, 'wrapped-old', 'wrapped-new')).toBe(false);

      expect(await store.read(subject)).toEqual({ state: 'destroyed', subject, destroyedAt: DESTROYED });
      expect(JSON.stringify(await store.list(undefined, 10_000))).not.toContain('wrapped-new');
    });
  });
}
