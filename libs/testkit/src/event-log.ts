import type { EventLog } from '@rsd/ports';
import { uniqueName } from './contracts/eventually';

/** Every value on `topic` so far, in order, read from the beginning by a consumer group of its own. */
export async function valuesOn(eventLog: EventLog, topic: string): Promise<string[]> {
  const values: string[] = [];
  const subscription = await eventLog.subscribe({
    groupId: uniqueName('test'),
    topics: [topic],
    fromBeginning: true,
    handle: (record) => {
      values.push(record.value);
      return Promise.resolve();
    },
  });
  await subscription.caughtUp;
  await subscription.close();
  return values;
}
