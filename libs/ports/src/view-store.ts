import type { ListedView, ViewDefinition } from '@rsd/domain';

/** Which documents of a partition a list returns; every bound is optional and they combine. */
export interface ListRange {
  limit: number;
  /** Sort keys at or above this. */
  atLeast?: string;
  /** Sort keys at or below this. */
  atMost?: string;
  /** Sort keys strictly below this: the page after one that ended there. */
  below?: string;
}

/**
 * Where the read views' documents live: one versioned document store for every view, implemented
 * once per technology (memory, MongoDB) and once as a cache in front of another store. It knows
 * nothing of what a view means: the view's `evolve` decides the next state, and the store only
 * refuses a write that is not newer than what it holds.
 */
export interface ViewStore {
  get<S>(view: ViewDefinition<S>, key: string): Promise<S | undefined>;
  /**
   * The documents of many keys at once (a portfolio page): keys without a document are absent from
   * the map. One round trip where the technology allows it, so a page costs a bounded number of lookups.
   */
  getMany<S>(view: ViewDefinition<S>, keys: readonly string[]): Promise<Map<string, S>>;
  /**
   * Upserts the document unless the stored one has the same or a newer `view.versionOf`. False when
   * it was refused: someone else wrote the same or a newer state first.
   */
  put<S>(view: ViewDefinition<S>, key: string, state: S): Promise<boolean>;
  /** At most `range.limit` documents of one partition within the range, greatest sort key first. */
  list<S>(view: ListedView<S>, partition: string, range: ListRange): Promise<S[]>;
  /**
   * Decision 56: removes every document of the view whose state's `organizationId` is this one (an
   * offboarded organization's), whatever its version; documents of other organizations, and those
   * with no organization, stay. Idempotent.
   */
  purgeOrganization(view: ViewDefinition<unknown>, organizationId: string): Promise<void>;
  close(): Promise<void>;
}
