import type { Db } from 'mongodb';

/** The readiness check: resolves when the server answers `ping`, throws otherwise. */
export async function pingMongo(db: Db): Promise<void> {
  await db.command({ ping: 1 });
}
