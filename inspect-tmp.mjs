import { MongoClient } from 'mongodb';
const c = await MongoClient.connect('mongodb://127.0.0.1:27018/');
const dbs = (await c.db().admin().listDatabases()).databases.map(d => d.name).filter(n => n.startsWith('nscale_notifier'));
for (const name of dbs) {
  const db = c.db(name);
  const pending = await db.collection('webhook_deliveries').find({ state: 'pending' }).project({ shard: 1, dueAt: 1, attempts: 1, fence: 1, clientId: 1 }).toArray();
  const byShard = {};
  for (const d of pending) byShard[d.shard] = (byShard[d.shard] ?? 0) + 1;
  console.log(name, 'pending', pending.length, JSON.stringify(byShard), 'sample', JSON.stringify(pending.slice(0, 2)));
  const leases = await db.collection('leases').find().toArray();
  const now = new Date().toISOString();
  console.log('now', now);
  for (const l of leases.filter(l => l.kind === 'member')) console.log('member', l.name, l.until);
  const epochs = leases.filter(l => l.kind === 'epoch').sort((a,b)=>a.name.localeCompare(b.name, undefined, {numeric:true}));
  console.log(epochs.map(l => `${l.name}#${l.fence}:${l.owner.slice(-8)}:${l.until.slice(11,19)}${l.released?'R':''}`).join(' '));
}
await c.close();
