export * from './runtime-config';
export * from './open-runtime';
export * from './dependency-of';
export * from './secrets';
export * from './run-services';
export * from './tracing';
export * from './run-task';
