export * from './service-metrics';
export * from './operations';
export * from './http-tracing';
