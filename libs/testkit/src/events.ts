import { randomUUID } from 'node:crypto';
import { newEvent, type DomainEvent } from '@rsd/contracts';

/** The event whose `type` is `T`. */
export type EventOfType<T extends DomainEvent['type']> = Extract<DomainEvent, { type: T }>;

export interface TestEventStamp {
  time: Date;
  /** Default: /test. */
  source?: string;
  /** Default: a fresh UUID. */
  id?: string;
}

/** An event as a producer makes one, for tests: its envelope around `data`, stamped with `stamp`. */
export function anEvent<T extends DomainEvent['type']>(type: T, data: EventOfType<T>['data'], stamp: TestEventStamp): EventOfType<T> {
  const { time, source = '/test', id = randomUUID() } = stamp;
  // TypeScript cannot narrow the union by a generic `type`; the signature already ties `data` to it.
  const typed = { type, data } as Pick<EventOfType<T>, 'type' | 'data'>;
  return newEvent<EventOfType<T>>({ id, source, time, ...typed });
}
