import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The product's version, the root package.json's: every OpenAPI document's `info.version` (decision 57), so a
 * document names the release that serves it. Read from the repository's (or the image's /app) root, three levels
 * above this file's folder (libs/api-documents/src or dist).
 */
export const PRODUCT_VERSION = (JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string })
  .version;
