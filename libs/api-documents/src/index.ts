// The OpenAPI document of each service, built from the contracts' zod schemas (decision 36); each service mounts its
// own, and `npm run openapi:write` commits them all under openapi/ (decision 57).
export { consoleOpenApi } from './console';
export { auditLogOperation, credentialsOpenApi } from './credentials';
export { notifierOpenApi, webhookOperations, type WebhookOwnerDocumentation } from './notifier';
export { PRODUCT_VERSION } from './product';
export { readApiOpenApi, type ReadApiDocumentSettings } from './read-api';
export { scoreIngestOpenApi } from './score-ingest';
export { EXAMPLE_BODIES, missingExamples, operationsOf } from './examples';
