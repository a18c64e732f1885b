export * from './runtime-config';
export * from './open-runtime';
export * from './dependency-of';
