// Decision 57's checks of the built image, for scripts/ci/containers.sh:
//
//   docker image inspect --format '{{json .Config.Labels}}' IMAGE | REVISION=<commit> node scripts/ci/image-labels.mjs
//       the OCI labels: source, title, licenses (Apache-2.0, as LICENSE and package.json), version (the root
//       package.json's) and revision (REVISION, the commit built)
//   node scripts/ci/image-labels.mjs --sbom FILE
//       the SBOM the image ships: CycloneDX JSON whose subject is this product at package.json's version, listing
//       the production dependencies the image runs on (express, kafkajs …) and no development one (jest)
//
// Prints what it checked; exits 1 naming each difference.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const product = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const problems = [];
const expect = (what, actual, wanted) => {
  if (actual !== wanted) problems.push(`${what}: ${JSON.stringify(actual)}, expected ${JSON.stringify(wanted)}`);
};

if (process.argv[2] === '--sbom') {
  const file = process.argv[3];
  const sbom = JSON.parse(readFileSync(file, 'utf8'));
  expect('bomFormat', sbom.bomFormat, 'CycloneDX');
  // By bom-ref (name@version): npm names a workspace's component, and the root's, after its folder.
  expect('the subject', sbom.metadata?.component?.['bom-ref'], `${product.name}@${product.version}`);
  const names = new Set((sbom.components ?? []).map((component) => component['bom-ref'].slice(0, component['bom-ref'].lastIndexOf('@'))));
  for (const runtime of ['express', 'kafkajs', 'zod', '@rsd/read-api']) if (!names.has(runtime)) problems.push(`no component ${runtime}`);
  for (const development of ['jest', 'typescript', 'eslint'])
    if (names.has(development)) problems.push(`a development dependency: ${development}`);
  if (problems.length === 0) {
    console.log(`image SBOM: CycloneDX ${sbom.specVersion}, ${product.name} ${product.version}, ${names.size} components (${file})`);
  }
} else {
  const labels = JSON.parse(readFileSync(0, 'utf8')) ?? {};
  const label = (name) => labels[`org.opencontainers.image.${name}`];
  expect('org.opencontainers.image.source', label('source'), 'https://github.com/resilience-score/resilience-score-data-api');
  expect('org.opencontainers.image.title', label('title'), 'Resilience Score Data API');
  expect('org.opencontainers.image.licenses', label('licenses'), product.license);
  expect('org.opencontainers.image.version', label('version'), product.version);
  expect('org.opencontainers.image.revision', label('revision'), process.env.REVISION);
  if (problems.length === 0)
    console.log(`image labels: ${label('title')} ${label('version')} (${label('revision')}), ${label('licenses')}, ${label('source')}`);
}
for (const problem of problems) console.error(`image check: ${problem}`);
process.exit(problems.length === 0 ? 0 : 1);
