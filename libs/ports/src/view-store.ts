import type { ListedView, ViewDefinition } from '@rsd/domain';

/**
 * Where the read views' documents live: one versioned document store for every view, implemented
 * once per technology (memory, MongoDB) and once as a cache in front of another store. It knows
 * nothing of what a view means: the view's `evolve` decides the next state, and the store only
 * refuses a write that is not newer than what it holds.
 */
export interface ViewStore {
  get<S>(view: ViewDefinition<S>, key: string): Promise<S | undefined>;
  /**
   * Upserts the document unless the stored one has the same or a newer `view.versionOf`. False when
   * it was refused: someone else wrote the same or a newer state first.
   */
  put<S>(view: ViewDefinition<S>, key: string, state: S): Promise<boolean>;
  /** At most `limit` documents of one partition, greatest sort key first. */
  list<S>(view: ListedView<S>, partition: string, limit: number): Promise<S[]>;
  close(): Promise<void>;
}
