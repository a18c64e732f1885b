import { dueInTurns, TURNS_PER_OWNER, type DueReads } from './due-in-turns';

interface Queued {
  key: string;
  clientId: string;
}

/** The queue as a store keeps it, in its order; counts what each read returned, as a store's rows read. */
function queueOf(owners: string): { reads: DueReads<Queued>; rowsRead: () => number } {
  const queue = [...owners].map((clientId, index) => ({ key: `${String(index).padStart(4, '0')}-${clientId}`, clientId }));
  let rows = 0;
  const counted = (found: Queued[]) => {
    rows += found.length;
    return Promise.resolve(found);
  };
  return {
    reads: {
      next: (after, skippedOwners, count) =>
        counted(
          queue
            .filter((delivery) => (after === undefined || delivery.key > after.key) && !skippedOwners.includes(delivery.clientId))
            .slice(0, count),
        ),
      more: (owners, skippedKeys, count) =>
        counted(queue.filter((delivery) => owners.includes(delivery.clientId) && !skippedKeys.includes(delivery.key)).slice(0, count)),
    },
    rowsRead: () => rows,
  };
}

const ownersOf = (batch: readonly Queued[]) => batch.map((delivery) => delivery.clientId).join('');

describe('due deliveries in turns between owners (decision 50)', () => {
  test('when one owner has many deliveries due before another’s one, then the other’s is in the first batch, second', async () => {
    const { reads } = queueOf(`${'A'.repeat(125)}B`);

    const batch = await dueInTurns(10, reads);

    expect(ownersOf(batch)).toBe('ABAAAAAAAA');
    expect(batch[1]?.key).toBe('0125-B');
  });

  test('when owners have several due, then each gets its earliest, then each its second, and so on; the rest oldest first', async () => {
    const { reads } = queueOf('AABACBAABAAA');

    expect(ownersOf(await dueInTurns(100, reads))).toBe('ABCABABAAAAA');
    expect(ownersOf(await dueInTurns(5, reads))).toBe('ABCAB');
  });

  test('when as many owners as the batch holds have something due, then each of the first gets one, in the order they are due', async () => {
    const { reads } = queueOf('AAAAAAAAAABCDEFGHIJ');

    expect(ownersOf(await dueInTurns(4, reads))).toBe('ABCD');
  });

  test('when one owner is alone in the queue, then the whole batch is its, oldest first', async () => {
    const { reads } = queueOf('A'.repeat(30));

    const batch = await dueInTurns(10, reads);

    expect(batch.map((delivery) => delivery.key)).toEqual(Array.from({ length: 10 }, (_, index) => `${String(index).padStart(4, '0')}-A`));
  });

  test('when one owner has thousands due, then they are not all read: its turns, then it is skipped', async () => {
    const { reads, rowsRead } = queueOf(`${'A'.repeat(5000)}BC`);

    expect(ownersOf(await dueInTurns(32, reads))).toBe(`ABCAAA${'A'.repeat(26)}`);
    // A page of 32, the page that skips A (B and C), and the rest of the batch from A's queue.
    expect(rowsRead()).toBeLessThanOrEqual(32 + 2 + 32);
  });

  test('when nothing is due or the limit is 0, then the batch is empty', async () => {
    expect(await dueInTurns(10, queueOf('').reads)).toEqual([]);
    expect(await dueInTurns(0, queueOf('AB').reads)).toEqual([]);
  });

  test('when an owner has exactly its turns, then it is skipped afterwards and nothing of it is asked again', async () => {
    const { reads } = queueOf(`${'A'.repeat(TURNS_PER_OWNER)}B`);

    expect(ownersOf(await dueInTurns(10, reads))).toBe(`AB${'A'.repeat(TURNS_PER_OWNER - 1)}`);
  });
});
