import { generateKeyPairSync } from 'node:crypto';
import type { Command } from 'commander';
import { runBackupCommand } from './backup';
import { runSealLogCommand } from './seal-log';
import { kebab, type Builders } from './cli';
import { UsageError } from './score-file';
import { addSubjectKeyCommands } from './subject-keys';

/**
 * The product's own commands (decision 57), in the `rsd` of a checkout of the product (the workspace's `npx rsd`) and
 * not in the published CLI: a new response-signing key for a deployment's configuration, the embedded runtime's
 * development token (its secret is in the data directory beside it), and the embedded runtime's backup, restore and
 * rewrite of a log written before sealing.
 * Their names are PRODUCT_COMMANDS in cli.ts, which the published CLI's error for one names.
 */
export function addProductCommands(program: Command, { io, productFor, act, note }: Builders): void {
  const { env } = io;
  program
    .command('signing-key')
    .summary('A new Ed25519 key for RESPONSE_SIGNING_KEYS')
    .description('A new Ed25519 key for RESPONSE_SIGNING_KEYS, as a JWK list (its private part: redirect it into a secret)')
    .option('--kid <name>', 'the key id (default rsd-<today>)')
    .action(
      act((options) => {
        // The private part goes to stdout only: redirect it straight into a secret, never into a file in the repository.
        const { x, d } = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
        const kid = (options.kid as string | undefined) ?? `rsd-${new Date().toISOString().slice(0, 10)}`;
        return Promise.resolve(JSON.stringify([{ kty: 'OKP', crv: 'Ed25519', x, d, kid }]));
      }),
    );

  program
    .command('token')
    .summary('A development bearer token')
    .description("A development bearer token, signed with JWT_HS256_SECRET or the embedded runtime's secret in DATA_DIR (default .data)")
    .option('--org <id>', 'the organization it administers (the org claim)')
    .option('--scope <scopes>', 'space-separated scopes', 'authorizations:write scores:write')
    .option('--ttl <duration>', 'how long it is valid (12h, 30m, 7d)', '12h')
    .action(
      act(async (options) => {
        const secret = await productFor(options).devSecret();
        if (!secret) throw new UsageError('no development secret: set JWT_HS256_SECRET or start the embedded runtime (npm start) first');
        const org = options.org as string | undefined;
        const { signDevToken } = await import('@rsd/platform');
        return signDevToken(secret, { scope: options.scope as string, ...(org ? { org } : {}) }, options.ttl as string);
      }),
    );

  program
    .command('backup')
    .summary("A consistent backup of the embedded runtime's databases into FILE")
    .description(
      'Embedded runtime, while it serves: a consistent copy of every database of DATA_DIR into the new file FILE, a tar archive ' +
        'with a manifest; refused if FILE exists; the keys in DATA_DIR are not in it',
    )
    .argument('<file>', "the backup's new file")
    .option('--data-dir <dir>', 'the data directory (DATA_DIR, default .data)')
    .action(act((options, file) => runBackupCommand('backup', [file], kebab(options), { env, note })));

  program
    .command('restore')
    .summary('Checks a backup and puts it in place in --data-dir')
    .description(
      'Checks the backup FILE (or the backup directory of an earlier version) and puts it in place; refused while a process has ' +
        "the directory's databases open, and over data already there unless --force, which moves that data aside",
    )
    .argument('<file>', 'the backup')
    .requiredOption('--data-dir <dir>', 'the data directory to restore into (no product may be running on it)')
    .option('--force', 'move the data already there aside')
    .option(
      '--without-webhook-key',
      'restore webhook subscriptions without their key (otherwise needed in DATA_DIR/webhook-secret-key or WEBHOOK_SECRET_KEY)',
    )
    .option('--subject-keys <file>', "the product's current subject key store (its subject-keys.db), copied in with the backup")
    .option(
      '--without-subject-keys',
      'restore sealed events without their keys (otherwise needed: DATA_DIR/subject-keys-master.key or SUBJECT_KEYS_MASTER_KEY, and the key store)',
    )
    .action(act((options, file) => runBackupCommand('restore', [file], kebab(options), { env, note })));
  addSubjectKeyCommands(program, { io, act });

  program
    .command('seal-log')
    .summary("Seals the embedded log's events written before sealing (decision 56), the product stopped")
    .description(
      "Embedded runtime, the product stopped: rewrites every event of DATA_DIR/rsd.sqlite's log written before sealing into its sealed form, " +
        'in place (positions kept), then rewrites the file without the clear values; refused while a process has the directory open; ' +
        'a second run changes nothing, an interrupted one is run again',
    )
    .option('--data-dir <dir>', 'the data directory (DATA_DIR, default .data)')
    .action(act((options) => runSealLogCommand(kebab(options), { env, note })));
}
