export * from './runtime-config';
export * from './open-runtime';
export * from './dependency-of';
export * from './service';
export * from './secrets';
export * from './run-services';
export * from './tracing';
