import { isDeepStrictEqual } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { consoleOpenApi, credentialsOpenApi, notifierOpenApi, readApiOpenApi, scoreIngestOpenApi } from '@rsd/api-documents';
import { documentedWebhookOwners, notifierConfigSchema } from '@rsd/notifier';
import { loadConfig } from '@rsd/platform';
import { readApiConfigSchema } from '@rsd/read-api';

/** Where the committed documents are (decision 57): openapi/<service>.json at the repository's root. */
export const API_DOCUMENTS_DIR = join(__dirname, '..', '..', '..', 'openapi');

/**
 * Each service's OpenAPI document as a service started without settings serves it at /v1/openapi.json: the
 * documents state a few settings (the read API's rate limits, the Client ID's prefix), and these are their defaults.
 */
export function apiDocuments(): Record<string, object> {
  return {
    'read-api': readApiOpenApi(loadConfig(readApiConfigSchema, {})),
    credentials: credentialsOpenApi(),
    'score-ingest': scoreIngestOpenApi(),
    notifier: notifierOpenApi(documentedWebhookOwners(loadConfig(notifierConfigSchema, {}))),
    console: consoleOpenApi(),
  };
}

/** A document as it is committed: two-space JSON and a final newline, as Prettier leaves it. */
export const documentText = (document: object): string => `${JSON.stringify(document, null, 2)}\n`;

/** The services whose committed document is missing or says other than what the code builds (key order aside). */
export function staleApiDocuments(dir = API_DOCUMENTS_DIR): string[] {
  return Object.entries(apiDocuments())
    .filter(([service, document]) => {
      try {
        return !isDeepStrictEqual(JSON.parse(readFileSync(join(dir, `${service}.json`), 'utf8')), document);
      } catch {
        return true;
      }
    })
    .map(([service]) => service);
}
