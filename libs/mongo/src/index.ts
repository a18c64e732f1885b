export * from './mongo-authorization-store';
export * from './mongo-read-views';
export * from './views-snapshot';
export * from './mongo-health';
