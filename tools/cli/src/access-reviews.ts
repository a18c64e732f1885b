import type { AccessReviewDecision, AccessReviewSummary, Organization } from '@resilience-score/client';
import { Option, type Command } from 'commander';
import { listOutput } from './output';
import { DEFAULT_ORIGINS, type Product } from './product';
import { UsageError } from './score-file';

type Options = Record<string, unknown>;

/** What the access-review commands take from the program that holds them. */
export interface AccessReviewCommandDeps {
  io: { stdout: (text: string) => void };
  /** The product as the options given and the environment name it. */
  productFor: (options: Options) => Product;
  /** An action whose result is printed (as JSON, or a string as it is); undefined prints nothing. */
  act: (action: (options: Options, ...args: string[]) => Promise<unknown>) => (...args: unknown[]) => Promise<void>;
}

const DECISIONS: readonly AccessReviewDecision[] = ['keep', 'revoke'];
/** An instant as the API takes it: a date-time with seconds and an offset (Z or ±hh:mm). */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const LIMIT = { min: 1, max: 500 };

/**
 * Decision 54: `rsd access-reviews create|list|get|decide|report` under `reviews` (the group the
 * program made), through the SDK's `organization.accessReviews`. A refusal is the SDK's error, printed
 * as every command's (status, code, message and request id; exit 1); wrong usage exits 2 before
 * anything is sent. `report --output json` prints `{ report, jws }`, which `rsd verify` checks.
 */
export function addAccessReviewCommands(reviews: Command, { io, productFor, act }: AccessReviewCommandDeps): void {
  const admin = (name: string) =>
    reviews
      .command(name)
      .addOption(new Option('--org <id>', 'the organization').makeOptionMandatory())
      .addOption(new Option('--credentials-url <url>', `credentials service (RSD_CREDENTIALS_URL, default ${DEFAULT_ORIGINS.credentials})`))
      .addOption(
        new Option(
          '--token <jwt>',
          'bearer token (RSD_TOKEN; otherwise one is minted from JWT_HS256_SECRET or the secret in DATA_DIR, development only)',
        ),
      );
  const reviewId = () => new Option('--review-id <arv_…>', 'the review, as create or list prints it').makeOptionMandatory();
  const organization = (options: Options): Promise<Organization> => productFor(options).organization(options.org as string);

  admin('create')
    .summary('Begins a review of every active grant')
    .description(
      'Begins an access review: every grant active now becomes an item a reviewer keeps or revokes; at --due-at the items still ' +
        'undecided are kept or revoked as --on-overdue says. Prints the review with its progress',
    )
    .requiredOption(
      '--due-at <instant>',
      'when undecided items are settled: a future ISO 8601 date-time with an offset (2027-01-31T17:00:00Z)',
    )
    .addOption(
      new Option('--on-overdue <decision>', 'what becomes of an item still undecided then').choices(DECISIONS).makeOptionMandatory(),
    )
    .action(
      act(async (options) => {
        const dueAt = options.dueAt as string;
        if (!INSTANT.test(dueAt) || Number.isNaN(Date.parse(dueAt))) {
          throw new UsageError(`--due-at must be an ISO 8601 date-time with an offset, such as 2027-01-31T17:00:00Z (got "${dueAt}")`);
        }
        return (await organization(options)).accessReviews.create({ dueAt, onOverdue: options.onOverdue as AccessReviewDecision });
      }),
    );

  listOutput(admin('list'))
    .description("The organization's reviews with their progress, newest first: every page, as { items }")
    .option('--limit <n>', `reviews per page read (${LIMIT.min} to ${LIMIT.max}); every page is read`)
    .action(
      act(async (options) => {
        const limit = limitOf(options.limit as string | undefined);
        const items: AccessReviewSummary[] = [];
        for await (const review of (await organization(options)).accessReviews.list(limit === undefined ? {} : { limit }))
          items.push(review);
        return { items };
      }),
    );

  admin('get')
    .description('A review: its progress and every item, with what was decided, by whom and when')
    .addOption(reviewId())
    .action(act(async (options) => (await organization(options)).accessReviews.get(options.reviewId as string)));

  admin('decide')
    .description('Keeps or revokes one grant of a review (a revoke revokes the grant); prints the review after. A decision stands')
    .addOption(reviewId())
    .addOption(new Option('--client-id <id>', "the grant's Client ID").makeOptionMandatory())
    .addOption(new Option('--decision <decision>', 'keep or revoke the grant').choices(DECISIONS).makeOptionMandatory())
    .option('--note <text>', "the reviewer's reason (up to 1,000 characters), kept in the report")
    .action(
      act(async (options) => {
        const note = options.note as string | undefined;
        return (await organization(options)).accessReviews.decide(options.reviewId as string, options.clientId as string, {
          decision: options.decision as AccessReviewDecision,
          ...(note === undefined ? {} : { note }),
        });
      }),
    );

  admin('report')
    .description(
      "A review's report: each grant with its last use, reads in the review's period and decision. --output json prints " +
        "{ report, jws }, signed with the read API's keys: save it and check it with rsd verify FILE; --output csv the lines as CSV",
    )
    .addOption(reviewId())
    .addOption(new Option('--output <format>', 'how to print').choices(['json', 'csv']).default('json'))
    .action(
      act(async (options) => {
        const reviews = (await organization(options)).accessReviews;
        const id = options.reviewId as string;
        if (options.output === 'json') return reviews.report(id);
        io.stdout(await reviews.report(id, { format: 'csv' }));
        return undefined;
      }),
    );
}

/** `--limit`: a whole number within the list's bounds, or none. */
function limitOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < LIMIT.min || limit > LIMIT.max) {
    throw new UsageError(`--limit must be a whole number from ${LIMIT.min} to ${LIMIT.max} (got "${value}")`);
  }
  return limit;
}
