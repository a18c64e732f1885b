import { setFlagsFromString } from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring for a serving process. Once V8 sees most objects from
 * one allocation site survive a young-generation collection, it allocates that site's objects in
 * the old generation from then on. A server's objects live for one request, but a burst (start-up,
 * a warm-up, a pause of the machine) can make them survive a collection or two, and then every
 * request's objects went to the old generation: on a distributed read-API replica, 5.5 MB more old
 * space per young collection, collections of 5 to 6 ms instead of 2 to 2.5, a full collection every
 * second, a quarter fewer reads per second and twice the p99 (docs/decisions.md, "The read path's
 * cost", fourth round). It happened in most runs and not in others, so it could not be worked around
 * in the code; with pretenuring off it never happened. Set once, before the services start; V8
 * consults the flag at every collection, so setting it after start-up takes effect.
 */
export function tuneHeapForServing(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
