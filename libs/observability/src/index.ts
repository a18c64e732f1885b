export * from './service-metrics';
export * from './operations';
