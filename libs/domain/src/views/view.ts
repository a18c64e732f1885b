import type { DomainEvent } from '@rsd/contracts';

/** An event's type, and the event of one type. */
export type EventType = DomainEvent['type'];
export type EventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;

/**
 * What a view does with one event type: the document after the event, or `state` itself (the same
 * reference) when the event changes nothing: a duplicate, an event older than what the document
 * holds, or one it cannot apply. Written as a method so that a view of a narrower state is still a
 * `ViewDefinition<unknown>` (a list of views), as `evolve` is.
 */
export type EventHandler<S, E> = { handle(state: S | undefined, event: E): S | undefined }['handle'];

/** A handler per event type, each receiving its own type's event. */
export type ViewHandlers<S, T extends EventType = EventType> = { readonly [K in T]: EventHandler<S, EventOf<K>> };

/**
 * A read view: documents built from events only. Everything a view means lives here, pure; a store
 * adapter only keeps documents and refuses a write whose version is not newer than the stored one,
 * which is what keeps the views right under duplicates, replays and racing writers.
 *
 * A view names the events it is made of (`on`, declared with `viewEvents`); any other event is none
 * of its business, and a projection passes it by without calling the view or reading its documents.
 * That no event type is forgotten by every view and consumer at once is a test's to say
 * (`event-coverage.test.ts`), not a switch's.
 */
export interface ViewDefinition<S> {
  /** Also the name of the view's table or collection. */
  readonly name: string;
  /** The event types the view handles, each with its handler. */
  readonly on: Partial<ViewHandlers<S>>;
  /** The document an event concerns, or undefined when the event does not concern this view. */
  keyOf(event: DomainEvent): string | undefined;
  /** The document after the event (its handler's answer); `state` itself for an event the view does not handle. */
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

/** How a view declares its events: a handler per event type, and which document each of those events concerns. */
export interface ViewEventsDeclaration<S, T extends EventType> {
  /** The key of the document an event of a handled type concerns, or undefined when it concerns none of them. */
  keyOf(event: EventOf<T>): string | undefined;
  on: ViewHandlers<S, T>;
}

/**
 * A view's `on`, `keyOf` and `evolve` from its declaration, to spread into the view:
 * `{ name, ...viewEvents<State>()({ keyOf, on: { [EVENT_TYPES.x]: (state, event) => … } }), versionOf }`.
 * Curried so that the state is named and the event types are inferred from `on`'s keys, each
 * handler then typed with its own event. An event of a type not in `on` has no key and changes nothing.
 */
export function viewEvents<S>() {
  return <T extends EventType>(declaration: ViewEventsDeclaration<S, T>): Pick<ViewDefinition<S>, 'on' | 'keyOf' | 'evolve'> => {
    const on: Partial<ViewHandlers<S>> = declaration.on;
    // Looked up on every event a projection or cache sees, for every view: one map read.
    const handlers = eventHandlerMap<EventHandler<S, DomainEvent>>(on);
    return {
      on,
      keyOf: (event) => (handlers.has(event.type) ? declaration.keyOf(event as EventOf<T>) : undefined),
      evolve: (state, event) => {
        const handler = handlers.get(event.type);
        return handler ? handler(state, event) : state;
      },
    };
  };
}

/** A handler per event type for a decision made from events (the notifier's), each receiving its own type's event. */
export type EventConsumers<A extends unknown[], R, T extends EventType = EventType> = {
  readonly [K in T]: (event: EventOf<K>, ...args: A) => R;
};

/**
 * One function from a map of consumers (declared `satisfies Partial<EventConsumers<…>>`, so that each
 * handler takes its own type's event and the map can be read for the types it lists): the answer of
 * the event's type's handler, or `otherwise` for a type the map does not list.
 */
export function consumeEvents<A extends unknown[], R>(
  consumers: Partial<EventConsumers<A, R>>,
  otherwise: R,
): (event: DomainEvent, ...args: A) => R {
  const handlers = eventHandlerMap<(event: DomainEvent, ...args: A) => R>(consumers);
  return (event, ...args) => {
    const handler = handlers.get(event.type);
    return handler ? handler(event, ...args) : otherwise;
  };
}

/**
 * The handlers of a map by event type. TypeScript cannot tie a handler to the type it is listed
 * under once the type is a value; the mapped types above tie them where they are declared, so a
 * handler found under `event.type` takes that event.
 */
function eventHandlerMap<H>(handlers: object): ReadonlyMap<string, H> {
  return new Map(Object.entries(handlers) as [string, H][]);
}

/** The default branch of an exhaustive switch: compiles only when every case is handled. */
export function unhandled(event: never): never {
  throw new Error(`unhandled event: ${JSON.stringify(event)}`);
}

/** Revisions as versions: zero-padded so that string order is number order. */
export function revisionVersion(revision: number): string {
  return String(revision).padStart(12, '0');
}
