export * from './ids';
export * from './resources';
export * from './error-body';
export * from './authorization';
export * from './score-submission';
export * from './events';
export * from './access-log';
export * from './webhooks';
