export { createMemoryViewStore } from './memory-view-store';
export { memoryRateLimitStores } from './memory-rate-limit-store';
export { openFileEventLog, type FileEventLogOptions } from './file-event-log';
export type { EmbeddedLogger } from './embedded-logger';
export { openFileAuthorizationStore } from './file-authorization-store';
export { openFileAccessLog, openFileAccessLogStore, type FileAccessLogOptions } from './file-access-log';
