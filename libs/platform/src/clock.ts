import type { Clock } from '@rsd/ports';

export const systemClock: Clock = { now: () => new Date() };
