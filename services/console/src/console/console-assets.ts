import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ConsoleAsset {
  type: string;
  body: Buffer;
}

/** Beside src/ and dist/ alike: the console's stylesheet, script and icon, served from this service (no CDN). */
const ASSET_DIR = join(__dirname, '../../console-assets');

const TYPES = { 'console.css': 'text/css', 'console.js': 'text/javascript', 'icon.svg': 'image/svg+xml' } as const;

/** Read once when the service starts: three small files, and a missing one fails the start, not a page. */
export const CONSOLE_ASSETS: ReadonlyMap<string, ConsoleAsset> = new Map(
  Object.entries(TYPES).map(([name, type]) => [name, { type, body: readFileSync(join(ASSET_DIR, name)) }]),
);
