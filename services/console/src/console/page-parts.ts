import type { ApiError } from '@rsd/platform';
import { html, type Html } from './html';

// The pieces every console page is made of, written once: tables, form fields with their problems,
// choices, messages and a secret shown once. A page composes them; none looks anything up.

/**
 * A table of records: a header per column, the rows as given. Its caption names it for a screen reader
 * (the page's heading already says it to the eye); a `hidden` table is the text alternative of a drawing,
 * for screen readers only.
 */
export function dataTable(options: { caption?: string | Html; columns: readonly string[]; rows: readonly Html[]; hidden?: boolean }): Html {
  const head = html`<thead>
      <tr>
        ${options.columns.map((column) => html`<th scope="col">${column}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${options.rows}
    </tbody>`;
  if (options.hidden)
    return html`<table class="visually-hidden">
      <caption>
        ${options.caption}
      </caption>
      ${head}
    </table>`;
  return html`<div class="scroll">
    <table>
      ${
        options.caption === undefined
          ? ''
          : html`<caption class="visually-hidden">
              ${options.caption}
            </caption>`
      }${head}
    </table>
  </div>`;
}

/**
 * A page's top: the way back (the authorizations first, then `crumbs`), its heading, and what a redirect
 * or a refusal has to say.
 */
export function pageTop(
  title: string | Html,
  crumbs: readonly { href: string; label: string }[],
  said: { notice?: string | undefined; problem?: string | Html | undefined } = {},
): Html {
  return html`<p class="crumbs">
      <a href="/console">Authorizations</a>${crumbs.map((crumb) => html` · <a href="${crumb.href}">${crumb.label}</a>`)}
    </p>
    <h1>${title}</h1>
    ${messages(said)}`;
}

/** What a redirect or a refusal has to say above a page's content: a status line, an alert, or nothing. */
export function messages(options: { notice?: string | undefined; problem?: string | Html | undefined }): Html {
  return html`${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
  ${options.problem ? html`<p class="problem" role="alert">${options.problem}</p>` : ''}`;
}

/** The notice a redirect names (`?notice=`), among a page's fixed words: never text from the query. */
export function noticeAmong(notices: Readonly<Record<string, string>>, value: unknown): string | undefined {
  return typeof value === 'string' && Object.hasOwn(notices, value) ? notices[value] : undefined;
}

/** An API's refusal in its own words, with its code for whoever reports it. */
export function refusalOf(error: ApiError): Html {
  return html`${error.message} <code>${error.code}</code>`;
}

/** Problems of a form by field, `form` for those that name none. */
export type FormProblems<Field extends string> = Partial<Record<Field | 'form', string[]>>;

/**
 * A refused form's problems, by the field each of the API's details names (its path's first part), in
 * the person's words where `plain` has them; what names no field of the form, or a refusal without
 * details, is the form's.
 */
export function problemsByField<Field extends string>(
  error: ApiError,
  fields: readonly Field[],
  plain: Partial<Record<Field, string>> = {},
): FormProblems<Field> {
  const problems: FormProblems<Field> = {};
  for (const detail of error.details ?? []) {
    const named = detail.path.split(/[.[]/)[0] ?? '';
    const key = (fields as readonly string[]).includes(named) ? (named as Field) : 'form';
    const message = (key !== 'form' && plain[key]) || detail.message;
    if (!problems[key]?.includes(message)) (problems[key] ??= []).push(message);
  }
  if (Object.keys(problems).length === 0) problems.form = [error.message];
  return problems;
}

/**
 * A form's fields and their problems: the summary at its top (each problem named by its field, linking to
 * it), and by each field its own, with the attributes that tie the field to it.
 */
export function formProblems<Field extends string>(problems: FormProblems<Field>, names: Record<Field | 'form', string>) {
  return {
    /** Every problem at the form's top, where a keyboard or screen reader starts (the script focuses it). */
    summary(lead: string): Html {
      const listed = (Object.entries(problems) as [Field | 'form', string[] | undefined][]).flatMap(([field, list]) =>
        (list ?? []).map((message) => ({ field, message: field === 'form' ? message : `${names[field]}: ${message}` })),
      );
      if (listed.length === 0) return html``;
      return html`<div class="problem" role="alert" tabindex="-1" id="problems">
        <p><strong>${lead} Please correct:</strong></p>
        <ul>
          ${listed.map(({ field, message }) => (field === 'form' ? html`<li>${message}</li>` : html`<li><a href="#${field}">${message}</a></li>`))}
        </ul>
      </div>`;
    },
    /** The attributes of a field with a problem: invalid, and described by it. */
    described: (field: Field): Html => (problems[field] ? html` aria-invalid="true" aria-describedby="${field}-problem"` : html``),
    /** The field's problems, under it. */
    under: (field: Field): Html | string =>
      problems[field] ? html`<p class="field-problem" id="${field}-problem">${problems[field].join('; ')}</p>` : '',
  };
}

/** A choice of a select: its value as the form sends it (or a number of seconds), and its words. */
export type Choice = { value: string | number; label: string } | { seconds: number; label: string };

/** A select's options, the one whose value is `selected` chosen. */
export function choices(list: readonly Choice[], selected: string | number): Html[] {
  return list.map((choice) => {
    const value = 'value' in choice ? choice.value : choice.seconds;
    return html`<option value="${value}" ${String(value) === String(selected) ? html` selected` : html``}>${choice.label}</option>`;
  });
}

/** A secret shown once, with the button that copies it (the console's script shows the button where copying works). */
export function secretValue(id: string, value: string, copy: string): Html {
  return html`<code id="${id}" class="secret">${value}</code>
    <button type="button" class="secondary" data-copy="${id}" hidden>${copy}</button>
    <span class="copied" role="status" aria-live="polite"></span>`;
}
