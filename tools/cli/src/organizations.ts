import { Organization } from '@resilience-score/client';
import { Option, type Command } from 'commander';
import type { AccessReviewCommandDeps } from './access-reviews';
import { DEFAULT_ORIGINS, type Product } from './product';
import { UsageError } from './score-file';

/** What the organization and erasure commands take from the program that holds them. */
export type OrganizationCommandDeps = Pick<AccessReviewCommandDeps, 'productFor' | 'act'> & { note: (line: string) => void };

const credentialsUrl = () =>
  new Option('--credentials-url <url>', `credentials service (RSD_CREDENTIALS_URL, default ${DEFAULT_ORIGINS.credentials})`);
const token = (scope: string) =>
  new Option(
    '--token <jwt>',
    `bearer token with ${scope} (RSD_TOKEN; otherwise one is minted from JWT_HS256_SECRET or the secret in DATA_DIR, development only)`,
  );
const org = () => new Option('--org <id>', 'the organization').makeOptionMandatory();

/**
 * Decision 56: `rsd organizations offboard|offboarding` under `organizations` (the group the program
 * made), through the SDK's `organization.offboard` and `organization.offboarding`, with a token of
 * scope `organizations:delete`. `offboard` is final, so `--confirm` must repeat `--org` exactly:
 * otherwise it exits 2 before anything is sent. A refusal is printed as every command's (exit 1).
 */
export function addOrganizationCommands(organizations: Command, { productFor, act, note }: OrganizationCommandDeps): void {
  const admin = (name: string) =>
    organizations.command(name).addOption(org()).addOption(credentialsUrl()).addOption(token('organizations:delete'));

  admin('offboard')
    .summary('Offboards an organization: revokes every grant and erases its data (final)')
    .description(
      "Offboards the organization: revokes every grant (webhooks told as usual), destroys the organization's key and has every " +
        'service purge what it keeps of it. Final: --confirm must repeat --org. Prints the offboarding (status pending until every ' +
        'service has purged; rsd organizations offboarding follows it). Asked again, it takes every step again',
    )
    .addOption(new Option('--confirm <id>', 'the organization id again, exactly').makeOptionMandatory())
    .action(
      act(async (options) => {
        const id = options.org as string;
        if (options.confirm !== id) {
          throw new UsageError(`--confirm must repeat --org exactly ("${id}"): offboarding erases the organization for good`);
        }
        const started = await (await offboarder(productFor(options), id)).offboard({ confirm: id });
        if (started.status === 'pending') note(`rsd: offboarding ${id}; rsd organizations offboarding --org ${id} says when it is done`);
        return started;
      }),
    );

  admin('offboarding')
    .description(
      "The organization's offboarding: { status, startedAt, doneAt }, pending until every service has purged it, then done; " +
        'kept 30 days after it is done (OFFBOARDING_NOT_FOUND before it starts and after)',
    )
    .action(act(async (options) => (await offboarder(productFor(options), options.org as string)).offboarding()));
}

/** `rsd authorizations erase` and `rsd portfolio erase` (decision 56), each added to its group of the program. */
export function addErasureCommands(program: Command, { productFor, act }: OrganizationCommandDeps): void {
  groupOf(program, 'authorizations')
    .command('erase')
    .description(
      "Erases a grant's recipient: its key is destroyed and its name, contact fields and every address seen for it are erased " +
        'from every store; the grant stays, not revoked. Prints { subject, erasedAt }',
    )
    .addOption(org())
    .addOption(new Option('--client-id <id>', "the grant's Client ID").makeOptionMandatory())
    .addOption(credentialsUrl())
    .addOption(token('authorizations:write'))
    .action(
      act(async (options) =>
        (await productFor(options).organization(options.org as string)).authorizations.erase(options.clientId as string),
      ),
    );

  groupOf(program, 'portfolio')
    .command('erase')
    .description(
      "Erases the account's own data: its name, and on every grant it holds its addresses and the name the grant knew it by. " +
        'The grants and the account key stay. Prints { subject, erasedAt }',
    )
    .addOption(credentialsUrl())
    .addOption(new Option('--api-key <key>', 'the recipient account key (rsa_…) (RSD_API_KEY; prefer the variable: arguments show in ps)'))
    .action(act(async (options) => productFor(options).portfolio().erase()));
}

/** The organization's client with a token of `organizations:delete` (a given token is used as it is). */
async function offboarder(product: Product, id: string): Promise<Organization> {
  return new Organization({
    ...product.settings.transport,
    token: await product.token('organizations:delete', id),
    organizationId: id,
    credentialsUrl: `${product.origins.credentials}/v1`,
  });
}

function groupOf(program: Command, name: string): Command {
  const found = program.commands.find((command) => command.name() === name);
  if (!found) throw new Error(`rsd: the ${name} commands are registered before their erase`);
  return found;
}
