import type { CalculatedScore, DomainEvent } from '@rsd/contracts';
import { READ_VIEWS, currentScoreView, latestScoreView, scoreHistoryView, type ListedView, type ViewDefinition } from '@rsd/domain';
import { type ListRange, type ViewStore } from '@rsd/ports';
import { projectEvent } from '@rsd/consumers';
import { uniqueName } from './eventually';
import { describeStoreContract } from './per-test';
import { aCalculatedScore as aScore, scoreCalculated } from './port-fixtures';

export interface ViewStoreFixture {
  store: ViewStore;
  cleanup(): Promise<void>;
}

/** A view of the suite's own, so the store is tested apart from what the product's views mean. */
interface Note {
  topic: string;
  day: string;
  text: string;
  revision: number;
  tags: string[];
}

const notes: ListedView<Note> = {
  name: 'contract_notes',
  on: {},
  keyOf: () => undefined,
  evolve: (state) => state,
  versionOf: (note) => String(note.revision).padStart(6, '0'),
  partitionOf: (note) => note.topic,
  sortKeyOf: (note) => note.day,
};

const aNote = (topic: string, day: string, overrides: Partial<Note> = {}): Note => ({
  topic,
  day,
  text: `note of ${day}`,
  revision: 1,
  tags: ['a'],
  ...overrides,
});

const noteKey = (note: Note) => `${note.topic}|${note.day}`;

/** Nothing stored: a topic's document is its newest note. */
const newestNote: ViewDefinition<Note> = { ...notes, name: 'contract_newest_notes', headOf: notes };

/**
 * What every view store must do: keep documents per view, refuse a write that is not newer than the
 * stored version, list a partition by sort key, and let no caller change what it holds. Then the
 * product's own views, projected through the store, keep decision 2 under duplicates and replays.
 */
export function describeViewStoreContract(name: string, open: () => Promise<ViewStoreFixture>): void {
  describeStoreContract(`ViewStore contract: ${name}`, open, (store) => {
    let topic: string;

    beforeEach(() => {
      topic = uniqueName('topic');
    });

    describe('documents', () => {
      it('when a document is put, then get returns it and another key is undefined', async () => {
        const note = aNote(topic, '2026-11-20');

        expect(await store.put(notes, noteKey(note), note)).toBe(true);

        expect(await store.get(notes, noteKey(note))).toEqual(note);
        expect(await store.get(notes, `${topic}|2026-11-21`)).toBeUndefined();
      });

      it('when many keys are asked at once, then getMany returns the stored documents and leaves the others out', async () => {
        const first = aNote(topic, '2026-11-20');
        const second = aNote(topic, '2026-11-21', { text: 'second' });
        await store.put(notes, noteKey(first), first);
        await store.put(notes, noteKey(second), second);

        const found = await store.getMany(notes, [noteKey(second), `${topic}|2026-11-22`, noteKey(first)]);

        expect([...found.entries()].sort()).toEqual(
          [
            [noteKey(first), first],
            [noteKey(second), second],
          ].sort(),
        );
        expect(await store.getMany(notes, [])).toEqual(new Map());
      });

      it('when getMany asks a derived view, then each key gets the head of its partition', async () => {
        const other = uniqueName('topic');
        await store.put(notes, noteKey(aNote(topic, '2026-11-20')), aNote(topic, '2026-11-20'));
        await store.put(notes, noteKey(aNote(topic, '2026-11-21')), aNote(topic, '2026-11-21'));
        await store.put(notes, noteKey(aNote(other, '2026-11-19')), aNote(other, '2026-11-19'));

        const heads = await store.getMany(newestNote, [topic, other, uniqueName('empty-topic')]);

        expect(heads.get(topic)).toEqual(aNote(topic, '2026-11-21'));
        expect(heads.get(other)).toEqual(aNote(other, '2026-11-19'));
        expect(heads.size).toBe(2);
      });

      it('when a state with the same or an older version is put, then it is refused and the stored one stays', async () => {
        const current = aNote(topic, '2026-11-20', { revision: 2 });
        await store.put(notes, noteKey(current), current);

        expect(await store.put(notes, noteKey(current), { ...current, text: 'same version' })).toBe(false);
        expect(await store.put(notes, noteKey(current), { ...current, text: 'older', revision: 1 })).toBe(false);

        expect(await store.get(notes, noteKey(current))).toEqual(current);
      });

      it('when a state with a newer version is put, then it replaces the stored one', async () => {
        const first = aNote(topic, '2026-11-20');
        await store.put(notes, noteKey(first), first);
        const newer = { ...first, text: 'newer', revision: 2 };

        expect(await store.put(notes, noteKey(first), newer)).toBe(true);

        expect(await store.get(notes, noteKey(first))).toEqual(newer);
      });

      it('when a key read as absent is put, then get returns the new document (nothing remembers it absent)', async () => {
        const note = aNote(topic, '2026-11-20');
        expect(await store.get(notes, noteKey(note))).toBeUndefined();

        await store.put(notes, noteKey(note), note);

        expect(await store.get(notes, noteKey(note))).toEqual(note);
      });

      it('when a document that was read is replaced, then get returns the replacement, not what was read', async () => {
        const first = aNote(topic, '2026-11-20');
        await store.put(notes, noteKey(first), first);
        expect(await store.get(notes, noteKey(first))).toEqual(first);
        const newer = { ...first, text: 'newer', revision: 2 };

        await store.put(notes, noteKey(first), newer);

        expect(await store.get(notes, noteKey(first))).toEqual({ ...first, text: 'newer', revision: 2 });
      });

      it('when the object that was put is changed afterwards, then the stored document is not', async () => {
        const first = aNote(topic, '2026-11-20');
        await store.put(notes, noteKey(first), first);
        await store.get(notes, noteKey(first));
        const newer = { ...first, tags: [...first.tags], revision: 2 };
        await store.put(notes, noteKey(first), newer);

        newer.tags.push('changed after the put');
        newer.text = 'changed after the put';

        expect(await store.get(notes, noteKey(first))).toEqual({ ...first, revision: 2 });
      });

      it('when a returned document is changed by the caller, then the stored one is not', async () => {
        const note = aNote(topic, '2026-11-20');
        await store.put(notes, noteKey(note), note);

        const returned = await store.get(notes, noteKey(note));
        try {
          returned?.tags.push('changed');
        } catch {
          // An implementation may hand out frozen values instead of copies: the change is refused.
        }

        expect(await store.get(notes, noteKey(note))).toEqual(note);
      });

      it('when two views use the same key, then their documents stay apart', async () => {
        const note = aNote(topic, '2026-11-20');
        const other: ViewDefinition<Note> = { ...notes, name: 'contract_other_notes' };

        await store.put(notes, 'shared-key', note);
        await store.put(other, 'shared-key', { ...note, text: 'other view' });

        expect(await store.get(notes, 'shared-key')).toEqual(note);
        expect(await store.get(other, 'shared-key')).toEqual({ ...note, text: 'other view' });
      });
    });

    describe('lists', () => {
      it('when a partition is listed, then its documents come greatest sort key first, up to the limit', async () => {
        for (const day of ['2026-11-18', '2026-11-21', '2026-11-19', '2026-11-20']) {
          const note = aNote(topic, day);
          await store.put(notes, noteKey(note), note);
        }
        await store.put(notes, `${topic}|2026-11-20`, aNote(topic, '2026-11-20', { text: 'rewritten', revision: 2 }));

        const all = await store.list(notes, topic, { limit: 10 });
        const limited = await store.list(notes, topic, { limit: 2 });

        expect(all.map((note) => note.day)).toEqual(['2026-11-21', '2026-11-20', '2026-11-19', '2026-11-18']);
        expect(all[1]?.text).toBe('rewritten');
        expect(limited.map((note) => note.day)).toEqual(['2026-11-21', '2026-11-20']);
      });

      it('when a range is given, then its bounds are inclusive (atLeast, atMost), below is exclusive, and they combine', async () => {
        const days = ['2026-11-15', '2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'];
        for (const day of days) {
          const note = aNote(topic, day);
          await store.put(notes, noteKey(note), note);
        }
        const listed = async (range: Omit<ListRange, 'limit'>, limit = 10) =>
          (await store.list(notes, topic, { limit, ...range })).map((note) => note.day);

        expect(await listed({ atLeast: '2026-11-16', atMost: '2026-11-19' })).toEqual([
          '2026-11-19',
          '2026-11-18',
          '2026-11-17',
          '2026-11-16',
        ]);
        expect(await listed({ below: '2026-11-18' })).toEqual(['2026-11-17', '2026-11-16', '2026-11-15']);
        expect(await listed({ atMost: '2026-11-19', below: '2026-11-19', atLeast: '2026-11-17' })).toEqual(['2026-11-18', '2026-11-17']);
        expect(await listed({ atMost: '2026-11-18T12' })).toEqual(['2026-11-18', '2026-11-17', '2026-11-16', '2026-11-15']);
        expect(await listed({ atLeast: '2026-11-17' }, 2)).toEqual(['2026-11-20', '2026-11-19']);
        expect(await listed({ atLeast: '2026-11-21' })).toEqual([]);
        expect(await listed({ atMost: '2026-11-14' })).toEqual([]);
      });

      it('when two partitions have documents, then each lists only its own; an empty one lists nothing', async () => {
        const ours = aNote(topic, '2026-11-19');
        const theirs = aNote(uniqueName('other-topic'), '2026-11-21');
        await store.put(notes, noteKey(ours), ours);
        await store.put(notes, noteKey(theirs), theirs);

        expect(await store.list(notes, topic, { limit: 10 })).toEqual([ours]);
        expect(await store.list(notes, theirs.topic, { limit: 10 })).toEqual([theirs]);
        expect(await store.list(notes, uniqueName('empty-topic'), { limit: 10 })).toEqual([]);
      });
    });

    describe('a view derived from a listed one (headOf)', () => {
      const newest = () => store.get(newestNote, topic);
      const put = (note: Note) => store.put(notes, noteKey(note), note);

      it('when notes arrive out of order, then its document is the newest, read before and after each write', async () => {
        expect(await newest()).toBeUndefined();

        await put(aNote(topic, '2026-11-19'));
        expect(await newest()).toEqual(aNote(topic, '2026-11-19'));
        await put(aNote(topic, '2026-11-21'));
        expect(await newest()).toEqual(aNote(topic, '2026-11-21'));
        await put(aNote(topic, '2026-11-20'));
        expect(await newest()).toEqual(aNote(topic, '2026-11-21'));
        await put(aNote(topic, '2026-11-21', { text: 'revised', revision: 2 }));
        expect(await newest()).toEqual(aNote(topic, '2026-11-21', { text: 'revised', revision: 2 }));
        expect(await store.put(notes, noteKey(aNote(topic, '2026-11-21')), aNote(topic, '2026-11-21', { text: 'stale' }))).toBe(false);
        expect(await newest()).toEqual(aNote(topic, '2026-11-21', { text: 'revised', revision: 2 }));
      });

      it('when another partition changes, then this one keeps its newest; a partition with nothing has no document', async () => {
        await put(aNote(topic, '2026-11-20'));
        expect(await newest()).toEqual(aNote(topic, '2026-11-20'));

        const other = uniqueName('other-topic');
        await put(aNote(other, '2026-11-22'));

        expect(await newest()).toEqual(aNote(topic, '2026-11-20'));
        expect(await store.get(newestNote, other)).toEqual(aNote(other, '2026-11-22'));
        expect(await store.get(newestNote, uniqueName('empty-topic'))).toBeUndefined();
      });

      it('when the newest note is read, then the caller cannot change what the store holds', async () => {
        await put(aNote(topic, '2026-11-20'));
        const read = await newest();

        try {
          (read as Note).tags.push('changed');
        } catch {
          // A frozen copy refuses the change: as good as a copy.
        }

        expect(await newest()).toEqual(aNote(topic, '2026-11-20'));
      });
    });

    describe("the product's views, projected through the store", () => {
      let organizationId: string;
      /** Projects each score's event, and answers what the score views keep of each: the score and its event's id. */
      const project = async (...scores: CalculatedScore[]) => {
        const events = scores.map((score) => scoreCalculated(score));
        for (const event of events) await projectEvent(store, READ_VIEWS, event);
        return events.map((event) => ({ ...event.data, eventId: event.id }));
      };
      const latest = () => store.get(currentScoreView, organizationId);
      const history = () => store.list(scoreHistoryView, organizationId, { limit: 10 });

      beforeEach(() => {
        organizationId = uniqueName('org');
      });

      it('when scores for several dates arrive, then the latest is the greatest scoreDate and a late older one joins history only', async () => {
        const [, newest] = await project(
          aScore(organizationId, '2026-11-19', { score: 60 }),
          aScore(organizationId, '2026-11-21', { score: 80 }),
          aScore(organizationId, '2026-11-20', { score: 70, calculatedAt: '2026-11-22T00:00:00.000Z' }),
        );

        expect(await latest()).toEqual(newest);
        expect((await history()).map((score) => score.scoreDate)).toEqual(['2026-11-21', '2026-11-20', '2026-11-19']);
      });

      it('when a recalculation for the same date is later, then it replaces the score; an earlier one does not', async () => {
        const first = aScore(organizationId, '2026-11-20', { score: 70, calculatedAt: '2026-11-20T06:00:00.000Z' });
        const recalculation = { ...first, score: 74, calculatedAt: '2026-11-20T09:00:00.000Z' };
        const earlier = { ...first, score: 50, grade: 'Improve' as const, calculatedAt: '2026-11-20T05:00:00.000Z' };

        const [, recalculated] = await project(first, recalculation, earlier);

        expect(await latest()).toEqual(recalculated);
        expect(await history()).toEqual([recalculated]);
      });

      it('when the score on a date is asked for (a certificate), then one bounded read answers the newest at or before it', async () => {
        const [older, newer] = await project(
          aScore(organizationId, '2026-11-10', { score: 60 }),
          aScore(organizationId, '2026-11-20', { score: 80 }),
        );
        const onDate = async (asOf: string) => store.list(scoreHistoryView, organizationId, { limit: 1, atMost: asOf });

        // Between two scores, the earlier; on the day of a score, that score; before any, none.
        expect(await onDate('2026-11-15')).toEqual([older]);
        expect(await onDate('2026-11-20')).toEqual([newer]);
        expect(await onDate('2026-12-31')).toEqual([newer]);
        expect(await onDate('2026-11-09')).toEqual([]);
      });

      it("when an organization is purged from every view (decision 56), then nothing of it is read, listed or derived, and another organization's stay", async () => {
        const other = uniqueName('org');
        await project(aScore(organizationId, '2026-11-19'), aScore(organizationId, '2026-11-20'));
        const [kept] = await project(aScore(other, '2026-11-20', { score: 55 }));
        // Read first, so a store that remembers what it read must forget it too.
        expect(await latest()).toBeDefined();

        for (const view of READ_VIEWS) await store.purgeOrganization(view, organizationId);
        for (const view of READ_VIEWS) await store.purgeOrganization(view, organizationId);

        expect(await latest()).toBeUndefined();
        expect(await history()).toEqual([]);
        expect(await store.get(latestScoreView, organizationId)).toBeUndefined();
        expect(await store.get(currentScoreView, other)).toEqual(kept);
        expect(await store.list(scoreHistoryView, other, { limit: 10 })).toEqual([kept]);
      });

      it('when every event is projected twice, then the views are as after once', async () => {
        const events: DomainEvent[] = [
          scoreCalculated(aScore(organizationId, '2026-11-19')),
          scoreCalculated(aScore(organizationId, '2026-11-20', { score: 90, grade: 'Sustain' })),
        ];
        for (const event of events) await projectEvent(store, READ_VIEWS, event);
        const once = { latest: await latest(), history: await history() };

        for (const event of events) await projectEvent(store, READ_VIEWS, event);

        expect({ latest: await latest(), history: await history() }).toEqual(once);
      });
    });
  });
}
