import type { DayOfReads as DailyReads } from '@rsd/contracts';
import { html, type Html } from './html';
import { dataTable } from './page-parts';

const WIDTH = 640;
const HEIGHT = 180;
const LEFT = 40;
const BOTTOM = 24;
const TOP = 10;

/**
 * Decision 38's chart: reads per day over 30 days, successes and refusals side by side, as SVG drawn
 * on the server (no script, no inline style: colours come from the stylesheet by class, which the
 * strict CSP allows). The same figures follow as a table for screen readers; the drawing is one image
 * with a title and a summary.
 */
export function readsChart(days: readonly DailyReads[]): Html {
  const totalReads = days.reduce((sum, day) => sum + day.reads, 0);
  const totalRefusals = days.reduce((sum, day) => sum + day.refusals, 0);
  const peak = Math.max(1, ...days.map((day) => Math.max(day.reads, day.refusals)));
  const top = niceCeiling(peak);
  const plotHeight = HEIGHT - BOTTOM - TOP;
  const slot = (WIDTH - LEFT) / Math.max(1, days.length);
  const bar = Math.max(1, Math.floor(slot / 2) - 1);
  const y = (value: number) => TOP + plotHeight - (value / top) * plotHeight;
  const first = days[0]?.day ?? '';
  const last = days.at(-1)?.day ?? '';
  const busiest = Math.max(0, ...days.map((day) => day.reads + day.refusals));
  const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  const summary = `${plural(totalReads, 'successful read', 'successful reads')} and ${plural(totalRefusals, 'refusal', 'refusals')} from ${first} to ${last}; the busiest day had ${plural(busiest, 'request', 'requests')}.`;
  return html`<figure class="chart">
    <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="reads-chart-title reads-chart-desc" focusable="false">
      <title id="reads-chart-title">Reads per day, last 30 days</title>
      <desc id="reads-chart-desc">${summary}</desc>
      ${[0, top / 2, top].map(
        (value) =>
          html`<line class="grid" x1="${LEFT}" x2="${WIDTH}" y1="${y(value)}" y2="${y(value)}" />
            <text class="axis" x="${LEFT - 6}" y="${y(value) + 4}" text-anchor="end">${formatCount(value)}</text>`,
      )}
      ${days.map((day, index) => {
        const x = LEFT + index * slot + 1;
        // A date under today and every seventh day back from it.
        return html`<rect class="reads" x="${x}" y="${y(day.reads)}" width="${bar}" height="${y(0) - y(day.reads)}" />
          <rect class="refusals" x="${x + bar}" y="${y(day.refusals)}" width="${bar}" height="${y(0) - y(day.refusals)}" />
          ${(days.length - 1 - index) % 7 === 0 ? dayLabel(day.day, index === days.length - 1 ? WIDTH - 2 : x + bar, index === days.length - 1) : ''}`;
      })}
    </svg>
    <figcaption>
      <span class="key reads" aria-hidden="true"></span> Successful reads (200 and 304)
      <span class="key refusals" aria-hidden="true"></span> Refused reads (4xx and 5xx)
      <span class="hint">· UTC days; ${summary}</span>
    </figcaption>
    ${dataTable({
      hidden: true,
      caption: 'Reads per day, last 30 days (UTC)',
      columns: ['Day', 'Successful reads', 'Refused reads'],
      rows: days.map(
        (day) =>
          html`<tr>
            <th scope="row">${day.day}</th>
            <td>${day.reads}</td>
            <td>${day.refusals}</td>
          </tr>`,
      ),
    })}
  </figure>`;
}

/** `MM-DD` under its bars; today's ends at the right edge, where a centred one would be cut. */
function dayLabel(day: string, x: number, last: boolean): Html {
  return html`<text class="axis" x="${x}" y="${HEIGHT - 6}" text-anchor="${last ? 'end' : 'middle'}">${day.slice(5)}</text>`;
}

/** An axis top a person reads at a glance: 1, 2 or 5 times a power of ten, at or above the peak. */
function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function formatCount(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}
