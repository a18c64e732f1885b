import { Writable } from 'node:stream';
import { logLevel } from 'kafkajs';
import pino from 'pino';
import { kafkaLogCreator } from './kafka-logger';

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'debug' }, destination), lines };
}

describe('kafkaLogCreator', () => {
  it('when kafkajs logs, then ERROR and WARN keep their level, INFO becomes debug, and fields are kept', () => {
    const { log, lines } = capturingLogger();
    const write = kafkaLogCreator(log)(logLevel.INFO);
    const entry = (level: logLevel, message: string) => ({
      namespace: 'Consumer',
      level,
      label: 'x',
      log: { timestamp: 'now', logger: 'kafkajs', message, groupId: 'g' },
    });

    write(entry(logLevel.ERROR, 'crashed'));
    write(entry(logLevel.WARN, 'rebalancing'));
    write(entry(logLevel.INFO, 'joined'));

    expect(lines.map(({ level, msg }) => [level, msg])).toEqual([
      [50, 'crashed'],
      [40, 'rebalancing'],
      [20, 'joined'],
    ]);
    expect(lines[0]).toMatchObject({ component: 'kafkajs', namespace: 'Consumer', groupId: 'g' });
    expect(lines[0]).not.toHaveProperty('timestamp');
  });

  it('when kafkajs warns about bounded idempotent retries, then it is logged at debug: the adapter chose that on purpose', () => {
    const { log, lines } = capturingLogger();
    const write = kafkaLogCreator(log)(logLevel.INFO);

    write({
      namespace: 'Producer',
      level: logLevel.WARN,
      label: 'WARN',
      log: { timestamp: 'now', message: 'Limiting retries for the idempotent producer may invalidate EoS guarantees' },
    });

    expect(lines.map(({ level }) => level)).toEqual([20]);
  });
});
