import { readFlags, UsageError } from '../command-line';

export type Server = 'kafka' | 'mongo' | 'redis';

export const SERVERS: readonly Server[] = ['kafka', 'mongo', 'redis'];

export interface StartOrderOptions {
  /** Repetitions; each runs every order in `orders`. */
  repeat: number;
  orders: Server[][];
}

export const USAGE = `usage: npm run test:start-order -- [--repeat N] [--order kafka,mongo,redis | --order random]

  --repeat N      repetitions, each over every order (default 1)
  --order LIST    only this order of the three servers (comma-separated: kafka, mongo, redis)
  --order random  one order picked at random (what CI runs)

Each run starts credentials, score-ingest and two read-API replicas before any server, then
Kafka, the MongoDB-wire server and Redis in the given order on an infra instance of its own
(.infra/start-order, ports 19392/19393/27318/16579), waits until all four are ready, restarts
Kafka and waits for their readiness to drop and return. Exits 1 if any run fails.`;

/** The 6 orders in which three servers can start. */
export function allOrders(servers: readonly Server[] = SERVERS): Server[][] {
  if (servers.length <= 1) return [[...servers]];
  return servers.flatMap((first) => allOrders(servers.filter((s) => s !== first)).map((rest) => [first, ...rest]));
}

function parseOrder(raw: string | undefined, random: () => number): Server[] {
  if (raw === 'random') {
    const orders = allOrders();
    return orders[Math.floor(random() * orders.length)] ?? [...SERVERS];
  }
  const order = (raw ?? '').split(',').map((s) => s.trim());
  const valid = order.length === SERVERS.length && SERVERS.every((server) => order.includes(server));
  if (!valid) throw new UsageError(`--order must name kafka, mongo and redis once each (or be "random"), got "${raw ?? ''}"`);
  return order as Server[];
}

export function parseOptions(argv: readonly string[], random: () => number = Math.random): StartOrderOptions {
  const options: StartOrderOptions = { repeat: 1, orders: allOrders() };
  readFlags(
    argv,
    {
      repeat: (raw) => {
        const repeat = Number(raw);
        if (!Number.isInteger(repeat) || repeat < 1) throw new UsageError(`--repeat must be a whole number ≥ 1, got "${raw ?? ''}"`);
        options.repeat = repeat;
      },
      order: (raw) => {
        options.orders = [parseOrder(raw, random)];
      },
    },
    (arg) => `unknown argument "${arg}"`,
  );
  return options;
}
