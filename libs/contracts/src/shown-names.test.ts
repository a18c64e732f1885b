import { shownNameSchema, SHOWN_NAME_PATTERN, SHOWN_NAME_REFUSAL } from './shown-names';

const name = shownNameSchema('A name');

describe('names shown to people (decision 50)', () => {
  test.each([
    ['a right-to-left override', 'Acme\u202Ekcab'],
    ['a left-to-right embedding', 'Acme\u202ALtd'],
    ['a right-to-left isolate and its end', 'Acme \u2067Ltd\u2069'],
    ['a first-strong isolate', 'Acme\u2068Ltd'],
    ['a zero-width space', 'Ac\u200Bme'],
    ['a zero-width joiner', 'Ac\u200Dme'],
    ['a right-to-left mark', 'Acme\u200F'],
    ['a word joiner', 'Ac\u2060me'],
    ['a byte order mark inside', 'Ac\uFEFFme'],
    ['a soft hyphen', 'Ac\u00ADme'],
    ['an Arabic letter mark', 'Acme\u061C'],
    ['a C1 control (NEL)', 'Acme\u0085Ltd'],
    ['a newline', 'Acme\nLtd'],
    ['a language tag (beyond the BMP)', 'Acme\u{E0001}'],
    ['tag characters (beyond the BMP)', 'Acme\u{E0067}\u{E0062}'],
  ])('when a name holds %s, then it is refused, naming why', (_case, value) => {
    const parsed = name.safeParse(value);

    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.message)).toEqual([SHOWN_NAME_REFUSAL]);
  });

  test.each([['Acme Insurance'], ['Zoë Müller & Söhne'], ['שלום בע״מ'], ['شركة الأمان'], ['株式会社セキュア'], ['Café ☕ Ünïcödé']])(
    'when a name is %s, then it is accepted as written',
    (value) => {
      expect(name.parse(value)).toBe(value);
    },
  );

  test('when the documented pattern is compared with Unicode, then it refuses exactly the control and format characters of the BMP', () => {
    const withoutFlag = new RegExp(SHOWN_NAME_PATTERN);
    const withFlag = new RegExp(SHOWN_NAME_PATTERN, 'u');
    const differences: string[] = [];
    for (let code = 0; code <= 0xffff; code += 1) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const character = String.fromCharCode(code);
      const refused = /[\p{Cc}\p{Cf}]/u.test(character);
      if (withoutFlag.test(character) === refused || withFlag.test(character) === refused) differences.push(code.toString(16));
    }

    expect(differences).toEqual([]);
  });
});
