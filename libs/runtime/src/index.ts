export * from './runtime-config';
export * from './open-runtime';
