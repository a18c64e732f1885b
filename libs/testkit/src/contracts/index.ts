export * from './eventually';
export * from './event-log-contract';
export * from './authorization-store-contract';
export * from './view-store-contract';
export * from './rate-limit-store-contract';
export * from './port-fixtures';
export * from './access-log-store-contract';
export * from './webhook-store-contract';
