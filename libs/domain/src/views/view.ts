import type { DomainEvent } from '@rsd/contracts';

/**
 * A read view: documents built from events only. Everything a view means lives here, pure; a store
 * adapter only keeps documents and refuses a write whose version is not newer than the stored one,
 * which is what keeps the views right under duplicates, replays and racing writers.
 *
 * `keyOf` and `evolve` switch over every event type with `unhandled` as the default, so a new event
 * type that a view forgets fails to compile.
 */
export interface ViewDefinition<S> {
  /** Also the name of the view's table or collection. */
  readonly name: string;
  /** The document an event concerns, or undefined when the event does not concern this view. */
  keyOf(event: DomainEvent): string | undefined;
  /**
   * The document after the event. Returns `state` itself (the same reference) when the event changes
   * nothing: a duplicate, an event older than what the document holds, or one it cannot apply.
   */
  evolve(state: S | undefined, event: DomainEvent): S | undefined;
  /** Orders the states of one document: a newer state has a greater version (compared as strings). */
  versionOf(state: S): string;
  /**
   * True when a document is what its newest event alone makes of it: `evolve(state, event)` is
   * `evolve(undefined, event)` when that has the greater version, else `state`. The store's version
   * guard then makes that choice by itself, so a projection writes without reading first.
   */
  readonly newestWins?: boolean;
  /**
   * Set when nothing is stored for this view: the document of key K is the newest entry (greatest
   * sort key) of partition K in that listed view, which its stores read instead, and projections
   * skip. Its `evolve` must agree with that (a cache applies events to it).
   */
  readonly headOf?: ListedView<S>;
}

/** A view whose documents are also read as a list per partition, newest sort key first (e.g. history per organization). */
export interface ListedView<S> extends ViewDefinition<S> {
  partitionOf(state: S): string;
  sortKeyOf(state: S): string;
}

export function isListed<S>(view: ViewDefinition<S>): view is ListedView<S> {
  return 'partitionOf' in view && 'sortKeyOf' in view;
}

/** The default branch of an exhaustive switch: compiles only when every case is handled. */
export function unhandled(event: never): never {
  throw new Error(`unhandled event: ${JSON.stringify(event)}`);
}

/** Revisions as versions: zero-padded so that string order is number order. */
export function revisionVersion(revision: number): string {
  return String(revision).padStart(12, '0');
}
