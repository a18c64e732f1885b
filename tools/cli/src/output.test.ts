import { Command } from 'commander';
import { formatRows, formatted, listOutput } from './output';

const rows = [
  {
    clientId: 'cid_1',
    name: 'Example, "Insurance"',
    scopes: ['qr_score', 'score_trend'],
    usage: { last24h: 1, last30d: 9 },
    expiresAt: null,
  },
  { clientId: 'cid_2', name: 'Auditor', scopes: [], usage: { last24h: 0, last30d: 0 }, note: 'multi\nline' },
];

describe('list output formats', () => {
  test('when csv is asked for, then every field is a column (nested as a.b), quoted as RFC 4180 says, lines ending CRLF', () => {
    expect(formatRows(rows, 'csv')).toBe(
      'clientId,name,scopes,usage.last24h,usage.last30d,expiresAt,note\r\n' +
        'cid_1,"Example, ""Insurance""","qr_score,score_trend",1,9,,\r\n' +
        'cid_2,Auditor,,0,0,,"multi\nline"\r\n',
    );
  });

  test('when ndjson is asked for, then each row is one JSON line as the API gave it', () => {
    expect(
      formatRows(rows, 'ndjson')
        .split('\n')
        .slice(0, -1)
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual(rows);
    expect(formatRows([], 'ndjson')).toBe('');
  });

  test('when a table is asked for, then the columns are aligned, the given columns used when the command chose them', () => {
    expect(
      formatRows(
        rows.map(({ clientId, usage }) => ({ clientId, usage })),
        'table',
      ),
    ).toBe('clientId  usage.last24h  usage.last30d\ncid_1     1              9\ncid_2     0              0');
    expect(formatRows(rows, 'table', [['ID', (row) => String(row.clientId)]])).toBe('ID\ncid_1\ncid_2');
  });

  test('when a list command is given --output csv, then its rows are printed and the cursor of the next page told on stderr', async () => {
    const notes: string[] = [];
    let printed: unknown;
    const program = new Command('rsd').exitOverride();
    listOutput(program.command('list'), { tableAlias: true }).action((_options, command: Command) => {
      printed = formatted(command, { items: [{ id: 'a' }, { id: 'b' }], nextCursor: 'c2' }, (line) => notes.push(line));
    });

    await program.parseAsync(['list', '--output', 'csv'], { from: 'user' });
    expect(printed).toBe('id\r\na\r\nb\r\n');
    expect(notes).toEqual(['rsd: more: the next page with --cursor c2']);

    await program.parseAsync(['list', '--table'], { from: 'user' });
    expect(printed).toBe('id\na\nb');
    expect(() => program.parse(['list', '--output', 'xml'], { from: 'user' })).toThrow(/Allowed choices are json, table, csv, ndjson/);
  });

  test('when a list command is left to its default, or a command is no list, then what it answered is printed as it is', async () => {
    const answer = { items: [{ id: 'a' }], nextCursor: null };
    const program = new Command('rsd');
    const outcomes: unknown[] = [];
    listOutput(program.command('list')).action((_options, command: Command) => {
      outcomes.push(formatted(command, answer, () => undefined));
    });
    program.command('get').action((_options, command: Command) => {
      outcomes.push(formatted(command, answer, () => undefined));
    });

    await program.parseAsync(['list'], { from: 'user' });
    await program.parseAsync(['get'], { from: 'user' });
    expect(outcomes).toEqual([answer, answer]);
  });
});
