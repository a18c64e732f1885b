import { escapeHtml, html, Html } from './html';

const HOSTILE = `<script>alert("x")</script> & 'quoted'`;
const ESCAPED = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;';

describe('console html templates', () => {
  test('when text holds each of & < > " \', then each is replaced by its entity and nothing else changes', () => {
    expect(escapeHtml(`a&b<c>d"e'f`)).toBe('a&amp;b&lt;c&gt;d&quot;e&#39;f');
    expect(escapeHtml('plain text, ünïcode ✓')).toBe('plain text, ünïcode ✓');
  });

  test('when text is already escaped, then it is escaped again: text is never taken for markup', () => {
    expect(escapeHtml('&amp; &lt;b&gt;')).toBe('&amp;amp; &amp;lt;b&amp;gt;');
  });

  test('when a string is interpolated, in text or in an attribute, then it is escaped', () => {
    const name = HOSTILE;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(`<p title="${ESCAPED}">${ESCAPED}</p>`);
  });

  test('when an attribute value tries to close its quotes, then it cannot add an attribute', () => {
    const value = `" onmouseover="alert(1)`;
    const rendered = html`<input value="${value}" />`.value;

    expect(rendered).toBe('<input value="&quot; onmouseover=&quot;alert(1)" />');
    expect(rendered.match(/"/g)).toHaveLength(2);
  });

  test('when numbers and true are interpolated, then they are written as text', () => {
    expect(html`${42} ${-1.5} ${true} ${0}`.value).toBe('42 -1.5 true 0');
  });

  test('when null, undefined or false is interpolated, then nothing is written', () => {
    expect(html`[${null}][${undefined}][${false}]`.value).toBe('[][][]');
  });

  test('when an array is interpolated, then each item is rendered by the same rules and joined without separators', () => {
    const items = ['<a>', 'b&c', null, false, 7, html`<br />`, ['"nested"', html`<hr />`]];

    expect(html`<div>${items}</div>`.value).toBe('<div>&lt;a&gt;b&amp;c7<br />&quot;nested&quot;<hr /></div>');
  });

  test('when an Html value is interpolated, then it is written as it is, not escaped again', () => {
    const inner = html`<strong>${HOSTILE}</strong>`;

    expect(html`<p>${inner}</p>`.value).toBe(`<p><strong>${ESCAPED}</strong></p>`);
    expect(html`<p>${new Html('<em>trusted</em>')}</p>`.value).toBe('<p><em>trusted</em></p>');
  });

  test('when a string looks like markup but is not Html, then it is escaped even beside Html values', () => {
    const markup = '<em>not trusted</em>';
    expect(html`${new Html('<b>')}${markup}${new Html('</b>')}`.value).toBe('<b>&lt;em&gt;not trusted&lt;/em&gt;</b>');
  });

  test('when the template has no values or starts and ends with one, then the literal parts are kept in order', () => {
    expect(html`<p>only text</p>`.value).toBe('<p>only text</p>');
    expect(html`${'<'}middle${'>'}`.value).toBe('&lt;middle&gt;');
  });

  test('when an Html value is turned into a string, then its markup comes out unchanged', () => {
    const rendered = html`<i>${'&'}</i>`;

    expect(rendered).toBeInstanceOf(Html);
    expect(String(rendered)).toBe('<i>&amp;</i>');
    expect(rendered.toString()).toBe(rendered.value);
  });
});
