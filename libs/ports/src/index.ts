export * from './clock';
export * from './event-log';
export * from './authorization-store';
export * from './view-store';
export * from './rate-limit-store';
export * from './consumer-core';
export * from './project-event';
export * from './unavailable';
