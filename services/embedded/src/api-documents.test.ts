import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PRODUCT_VERSION } from '@rsd/api-documents';
import { apiDocuments, documentText, staleApiDocuments } from './api-documents';

// The repository's own package.json: the product's version, which every document states.
const ROOT_PACKAGE = jest.requireActual<{ version: string; license: string }>('../../../package.json');

describe('the committed OpenAPI documents (decision 57)', () => {
  test('when the code builds the documents, then openapi/<service>.json holds each of them', () => {
    const stale = staleApiDocuments();

    if (stale.length > 0) {
      throw new Error(`openapi/${stale.join('.json, openapi/')}.json differ from what the code builds: run \`npm run openapi:write\``);
    }
  });

  test("when a document is built, then it states the product's version and its license, Apache-2.0", () => {
    for (const document of Object.values(apiDocuments()) as { info: { version: string; license: unknown } }[]) {
      expect(document.info).toMatchObject({ version: ROOT_PACKAGE.version, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } });
    }
    expect([PRODUCT_VERSION, ROOT_PACKAGE.license]).toEqual([ROOT_PACKAGE.version, 'Apache-2.0']);
  });

  test('when a committed document says something else, or is missing, then it is named stale', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rsd-openapi-'));
    try {
      for (const [service, document] of Object.entries(apiDocuments())) writeFileSync(join(dir, `${service}.json`), documentText(document));
      writeFileSync(join(dir, 'console.json'), documentText({ ...apiDocuments().console, info: { title: 'changed' } }));
      rmSync(join(dir, 'score-ingest.json'));

      expect(staleApiDocuments(dir)).toEqual(['score-ingest', 'console']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
