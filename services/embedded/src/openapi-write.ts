// `npm run openapi:write`: writes each service's OpenAPI document to openapi/<service>.json (decision 57), as the
// code builds it; a test fails while a committed one differs.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { API_DOCUMENTS_DIR, apiDocuments, documentText } from './api-documents';

mkdirSync(API_DOCUMENTS_DIR, { recursive: true });
for (const [service, document] of Object.entries(apiDocuments())) {
  const file = join(API_DOCUMENTS_DIR, `${service}.json`);
  writeFileSync(file, documentText(document));
  process.stdout.write(`${relative(process.cwd(), file)}\n`);
}
