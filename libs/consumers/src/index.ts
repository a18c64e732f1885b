// How a record read from an event log is handled: the subscription engine both logs run, the one
// parse every consumer checks a record with, and an event projected into views. Engines, not ports:
// libs/ports keeps the interfaces they serve.
export * from './consumer-core';
export * from './parse-record';
export * from './project-event';
export * from './traced-event-log';
export * from './sealed-events';
export * from './offboarding-purges';
export * from './audit-projection';
export * from './subject-keys/erasures-in-log';
export * from './subject-keys/subject-key-backups';
export * from './subject-keys/master-key-rotation';
export * from './subject-keys/subject-key-maintenance';
export * from './sealed-access-records';
export * from './log-rewrite';
