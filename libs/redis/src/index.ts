export * from './redis-rate-limit-store';
export * from './redis-client';
export * from './local-fallback-store';
