export * from './mongo-authorization-store';
export * from './mongo-view-store';
export * from './views-snapshot';
export * from './mongo-health';
export * from './mongo-access-log-store';
export * from './mongo-webhook-store';
export * from './mongo-lease-store';
export * from './mongo-audit-log-store';
