export * from './clock';
export * from './event-log';
export * from './authorization-store';
export * from './read-views';
export * from './rate-limit-store';
export * from './consumer-core';
