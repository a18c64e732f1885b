export { createMemoryViewStore } from './memory-view-store';
export { memoryRateLimitStores } from './memory-rate-limit-store';
export type { EmbeddedLogger } from './embedded-logger';
export { openSqliteEventLog, type SqliteEventLogOptions } from './sqlite/sqlite-event-log';
export { openSqliteAuthorizationStore } from './sqlite/sqlite-authorization-store';
export { openSqliteViewStore, type SqliteViewStoreOptions } from './sqlite/sqlite-view-store';
export { importEarlierData, EARLIER_AUTHORIZATIONS, EARLIER_EVENT_LOG } from './sqlite/import-earlier-data';
export { formatLines as formatEarlierLogLines, type LoggedLine as EarlierLogLine } from './earlier-layout';
export { openFileAccessLog, openFileAccessLogStore, type FileAccessLogOptions } from './file-access-log';
