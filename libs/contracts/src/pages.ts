import { z } from 'zod';

/**
 * A page of a log read newest first (the access log, the audit trail, access reviews): its items, and
 * the cursor of the next, older page.
 */
export function newestFirstPageSchema<Item extends z.ZodType>(item: Item, id: string) {
  return z
    .object({
      items: z.array(item).meta({ description: 'Newest first' }),
      nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next (older) page; null when there is none' }),
    })
    .meta({ id });
}
