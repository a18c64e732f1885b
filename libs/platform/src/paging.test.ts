import { ApiError } from './errors';
import { cursorCodec, opaqueCursor } from './paging';

describe('cursorCodec: a list writes the position after its page, and reads back only what it wrote', () => {
  const codec = cursorCodec('t1', { at: '[0-9]{4}', id: '[a-z]{1,8}' }, { valid: ({ at }) => at !== '0000' });

  test('when a position is written, then it reads back with its named parts only, in order', () => {
    const cursor = codec.write({ at: '2026', id: 'abc', other: 'left out' } as { at: string; id: string });
    expect(Buffer.from(cursor, 'base64url').toString('utf8')).toBe('t1|2026|abc');
    expect(codec.read(cursor)).toEqual({ at: '2026', id: 'abc' });
  });

  test.each([
    ['another version', opaqueCursor('t2|2026|abc')],
    ['a part of the wrong shape', opaqueCursor('t1|20x6|abc')],
    ['a part too many', opaqueCursor('t1|2026|abc|d')],
    ['parts that are not valid', opaqueCursor('t1|0000|abc')],
    ['no base64url', 't1|2026|abc'],
  ])('when the cursor has %s, then it is INVALID_PARAMETER', (_name, cursor) => {
    expect(() => codec.read(cursor)).toThrow(ApiError);
  });
});
