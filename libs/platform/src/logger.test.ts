import { capturedLog as capturedServiceLog } from '@rsd/testkit';
import { childLogger, serviceLogger } from './logger';

const capturedLog = (level = 'debug') => capturedServiceLog('embedded', level);

/** The keys of a JSON line's top-level object in the order written, repeats included (JSON.parse would keep only the last). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let expectingKey = false;
  for (let i = 0; i < line.length; i += 1) {
    const char = line[i];
    if (char === '"') {
      let end = i + 1;
      while (end < line.length && line[end] !== '"') end += line[end] === '\\' ? 2 : 1;
      if (depth === 1 && expectingKey) keys.push(JSON.parse(line.slice(i, end + 1)) as string);
      expectingKey = false;
      i = end;
    } else if (char === '{' || char === '[') {
      depth += 1;
      expectingKey = char === '{' && depth === 1;
    } else if (char === '}' || char === ']') {
      depth -= 1;
    } else if (char === ',') {
      expectingKey = depth === 1;
    }
  }
  return keys;
}

function repeatedKeys(line: string): string[] {
  const keys = topLevelKeys(line);
  return keys.filter((key, index) => keys.indexOf(key) !== index);
}

describe('log lines', () => {
  it('when a plain pino child binds a key its parent has, then the line carries it twice (what childLogger avoids)', () => {
    const { log, lines } = capturedLog();

    log.child({ component: 'kafka' }).child({ component: 'kafkajs' }).info('joined');

    expect(repeatedKeys(lines[0] ?? '')).toEqual(['component']);
  });

  it('when a service logs, then its line names the service once and has no `name` repeating it', () => {
    const { log, lines } = capturedLog();

    log.info({ port: 8080 }, 'listening');

    expect(topLevelKeys(lines[0] ?? '')).toEqual(['level', 'time', 'service', 'port', 'msg']);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ service: 'embedded', port: 8080 });
  });

  it('when children re-bind service and component, then every line has each key once, with the innermost value', () => {
    const { log, lines } = capturedLog();
    const readApi = serviceLogger(log, 'read-api');
    const kafka = childLogger(readApi, { component: 'kafka-event-log' });
    const kafkajs = childLogger(kafka, { component: 'kafkajs', broker: '127.0.0.1:19092' });
    const subscription = kafkajs.child({ groupId: 'read-api.projections', topics: ['rsd.scores.v1'] });

    log.info('embedded');
    readApi.info('read-api');
    kafka.warn({ topic: 'rsd.scores.v1' }, 'kafka-event-log');
    kafkajs.error('kafkajs');
    subscription.info('subscription');
    childLogger(subscription, { service: 'credentials', component: 'relay' }).info('relay');

    expect(lines).toHaveLength(6);
    for (const line of lines) expect(repeatedKeys(line)).toEqual([]);
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ msg: 'embedded', service: 'embedded' }),
      expect.objectContaining({ msg: 'read-api', service: 'read-api' }),
      expect.objectContaining({ msg: 'kafka-event-log', service: 'read-api', component: 'kafka-event-log', topic: 'rsd.scores.v1' }),
      expect.objectContaining({ msg: 'kafkajs', service: 'read-api', component: 'kafkajs', broker: '127.0.0.1:19092' }),
      expect.objectContaining({ msg: 'subscription', component: 'kafkajs', groupId: 'read-api.projections', topics: ['rsd.scores.v1'] }),
      expect.objectContaining({ msg: 'relay', service: 'credentials', component: 'relay', groupId: 'read-api.projections' }),
    ]);
  });

  it('when a child replaces a binding, then it keeps its parent level and redaction', () => {
    const { log, lines } = capturedLog('warn');
    const credentials = serviceLogger(log, 'credentials');

    credentials.info('below the level');
    credentials.warn({ apiKey: 'rsk_secret', headers: { authorization: 'Bearer t' } }, 'redacted');

    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      service: 'credentials',
      apiKey: '[redacted]',
      headers: { authorization: '[redacted]' },
    });
  });
});
