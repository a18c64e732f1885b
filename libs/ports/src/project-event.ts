import type { DomainEvent } from '@rsd/contracts';
import type { ViewDefinition } from '@rsd/domain';
import type { ViewStore } from './view-store';

/** Writers racing on one document settle within a few rounds; more means something is wrong. */
const MAX_ATTEMPTS = 5;

/**
 * Applies one event to every view it concerns: read the document, let the view's `evolve` decide,
 * write only a changed state, guarded by its version. A refused write means another writer got there
 * first, so the event is evolved again on what that writer stored.
 */
export async function projectEvent(store: ViewStore, views: readonly ViewDefinition<unknown>[], event: DomainEvent): Promise<void> {
  for (const view of views) {
    const key = view.keyOf(event);
    if (key !== undefined) await evolveDocument(store, view, key, event);
  }
}

async function evolveDocument<S>(store: ViewStore, view: ViewDefinition<S>, key: string, event: DomainEvent): Promise<void> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    const state = await store.get(view, key);
    const next = view.evolve(state, event);
    if (next === undefined || next === state) return;
    if (await store.put(view, key, next)) return;
  }
  throw new Error(`view ${view.name}: document ${key} kept changing while the projection wrote it`);
}
