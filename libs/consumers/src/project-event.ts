import type { DomainEvent } from '@rsd/contracts';
import type { ViewDefinition } from '@rsd/domain';
import type { ViewStore } from '@rsd/ports';

/** Writers racing on one document settle within a few rounds; more means something is wrong. */
const MAX_ATTEMPTS = 5;

/** Applies one event to every view it concerns (projectEvents). */
export function projectEvent(store: ViewStore, views: readonly ViewDefinition<unknown>[], event: DomainEvent): Promise<void> {
  return projectEvents(store, views, [event]);
}

/**
 * Applies events, in order, to every view they concern: per document, read it, let the view's
 * `evolve` fold its events, and write only a changed state, guarded by its version. A refused write
 * means another writer got there first, so the events are folded again on what that writer stored.
 * A view whose newest event wins needs no read: the newest of the events' own states is written,
 * and the guard refuses it where the document is already as new (one round trip instead of two per
 * score and view on MongoDB). Documents are independent (the guards make their order irrelevant),
 * so they are written side by side. A view derived from another (`headOf`) has nothing stored to write.
 */
export async function projectEvents(
  store: ViewStore,
  views: readonly ViewDefinition<unknown>[],
  events: readonly DomainEvent[],
): Promise<void> {
  const writes: Promise<void>[] = [];
  for (const view of views) {
    if (view.headOf) continue;
    for (const [key, keyed] of eventsByKey(view, events)) {
      writes.push(view.newestWins ? putNewest(store, view, key, keyed) : evolveDocument(store, view, key, keyed));
    }
  }
  const failed = (await Promise.allSettled(writes)).find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

function eventsByKey(view: ViewDefinition<unknown>, events: readonly DomainEvent[]): Map<string, DomainEvent[]> {
  const byKey = new Map<string, DomainEvent[]>();
  for (const event of events) {
    // An event of a type the view does not handle is passed by: the view is not called, nor its documents read.
    if (view.on[event.type] === undefined) continue;
    const key = view.keyOf(event);
    if (key === undefined) continue;
    const keyed = byKey.get(key);
    if (keyed) keyed.push(event);
    else byKey.set(key, [event]);
  }
  return byKey;
}

async function putNewest<S>(store: ViewStore, view: ViewDefinition<S>, key: string, events: readonly DomainEvent[]): Promise<void> {
  let newest: S | undefined;
  for (const event of events) {
    const state = view.evolve(undefined, event);
    if (state !== undefined && (newest === undefined || view.versionOf(state) > view.versionOf(newest))) newest = state;
  }
  if (newest !== undefined) await store.put(view, key, newest);
}

async function evolveDocument<S>(store: ViewStore, view: ViewDefinition<S>, key: string, events: readonly DomainEvent[]): Promise<void> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    const state = await store.get(view, key);
    const next = events.reduce<S | undefined>((folded, event) => view.evolve(folded, event), state);
    if (next === undefined || next === state) return;
    if (await store.put(view, key, next)) return;
  }
  throw new Error(`view ${view.name}: document ${key} kept changing while the projection wrote it`);
}
