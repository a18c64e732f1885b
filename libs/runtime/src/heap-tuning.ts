import { setFlagsFromString } from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring for a serving process. Once V8 sees most objects from
 * one allocation site survive a young-generation collection, it allocates that site's objects in
 * the old generation from then on. A server's objects live for one request, but a burst (start-up,
 * a warm-up, a pause of the machine) can make them survive a collection or two, and then every
 * request's objects go to the old generation: longer young collections, frequent full ones, fewer
 * reads per second and a higher p99 (docs/decisions/0110-read-path-cost.md). Whether it happens
 * depends on timing, not on the code, so the code cannot work around it; with pretenuring off it
 * does not happen. Set once, before the services start; V8 consults the flag at every collection,
 * so setting it after start-up takes effect.
 */
export function tuneHeapForServing(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
