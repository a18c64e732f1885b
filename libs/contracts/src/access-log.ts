import { z } from 'zod';
import { clientIdSchema, isoDateSchema, utcInstantSchema } from './ids';
import { newestFirstPageSchema } from './pages';
import { SEALED_ATTRIBUTE, SEALED_EVENT_VERSION, SEALED_MEMBER } from './sealing';

/**
 * Decision 21's stream: a topic of its own beside the event store, with time-based retention. Not
 * one of TOPICS (those keep everything forever and are created so).
 */
export const ACCESS_LOG_TOPIC = 'rsd.access-log.v1';

export const ACCESS_LOG_LIMIT = { min: 1, max: 500, default: 100 } as const;

/** `claim`: a POST of the authorization's one-time claim link (decision 38), recorded by the credentials service; `certificate`: a certificate fetched (decision 55). */
export const ACCESS_RESOURCES = ['score', 'pillars', 'history', 'claim', 'certificate'] as const;
export const accessResourceSchema = z.enum(ACCESS_RESOURCES).meta({ id: 'AccessResource' });
export type AccessResource = z.infer<typeof accessResourceSchema>;

/** Decision 55: how a certificate was served: `{ certificate, jws }` or the one-page PDF. */
export const CERTIFICATE_FORMATS = ['json', 'pdf'] as const;

/** What a certificate fetch was for: the date asked for and the format served (the console lists them on the grant's page). */
export const certificateReadSchema = z
  .object({
    asOf: isoDateSchema.meta({ description: 'The date the certificate was asked for (`asOf`, today when omitted)' }),
    format: z.enum(CERTIFICATE_FORMATS).meta({ description: '`json` ({ certificate, jws }) or `pdf`' }),
  })
  .meta({ id: 'CertificateRead' });
export type CertificateRead = z.infer<typeof certificateReadSchema>;

/** A 429 has no `code` in its body; the access log names it so, so that a refusal always has a code (docs/decisions/0021-access-log.md). */
export const RATE_LIMITED_CODE = 'RATE_LIMITED';

/** The request ids the services accept from callers or make themselves (libs/platform access-log.ts). */
const requestIdSchema = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/);

/** One read-API request, as the organization sees it: no key, header or query string is ever part of it. */
export const accessLogEntrySchema = z
  .object({
    at: utcInstantSchema.meta({ description: 'When the read API answered' }),
    resource: accessResourceSchema,
    status: z.int().min(100).max(599).meta({ description: 'The HTTP status the read API answered with' }),
    code: z
      .string()
      .regex(/^[A-Z][A-Z_]{0,63}$/)
      .nullable()
      .meta({ description: `The error code answered, ${RATE_LIMITED_CODE} for a 429, null for a success or a 304` }),
    clientAddress: z
      .string()
      .max(64)
      .nullable()
      .meta({ description: 'The client address as the read API determines it (its trusted proxy hops included)' }),
    requestId: requestIdSchema.meta({ description: 'The x-request-id of the answer' }),
    certificate: certificateReadSchema.optional().meta({
      description: 'A certificate fetched (`resource` certificate) once its date was read: the date and the format; absent otherwise',
    }),
  })
  .meta({ id: 'AccessLogEntry' });
export type AccessLogEntry = z.infer<typeof accessLogEntrySchema>;

/** GET /v1/organizations/{organizationId}/authorizations/{clientId}/access-log */
export const accessLogPageSchema = newestFirstPageSchema(accessLogEntrySchema, 'AccessLogPage');
export type AccessLogPage = z.infer<typeof accessLogPageSchema>;

/** What the read API publishes: an entry, whose it is, and an id of its own (request ids come from callers and may repeat). */
export const accessRecordSchema = accessLogEntrySchema.extend({
  id: z.string().regex(/^[A-Za-z0-9-]{1,64}$/),
  clientId: clientIdSchema,
});
export type AccessRecord = z.infer<typeof accessRecordSchema>;

export const MAX_ACCESS_RECORDS_PER_MESSAGE = 1000;
/** One message on the access-log topic: a batch of records from one read-API replica. */
export const accessRecordBatchSchema = z.object({
  records: z.array(accessRecordSchema).min(1).max(MAX_ACCESS_RECORDS_PER_MESSAGE),
});
export type AccessRecordBatch = z.infer<typeof accessRecordBatchSchema>;

/**
 * Decision 56: a batch as the topic holds it once its addresses are sealed (`rsdsealed`: 1). Each
 * record whose address is sealed has no `clientAddress`; `sealed` holds one part per grant
 * (`grant:<clientId>`, the subject cipher's sealed value of `{ <record id>: address }`), or
 * `{ subject, erased: true }` for a grant already erased when the batch was sealed. A record read
 * without an address stays `null` in clear. Batches written before sealing have neither member.
 */
export const sealedAccessRecordBatchSchema = z.object({
  records: z
    .array(accessRecordSchema.extend({ clientAddress: accessRecordSchema.shape.clientAddress.optional() }))
    .min(1)
    .max(MAX_ACCESS_RECORDS_PER_MESSAGE),
  [SEALED_ATTRIBUTE]: z.literal(SEALED_EVENT_VERSION),
  [SEALED_MEMBER]: z.array(z.looseObject({ subject: z.string() })).max(MAX_ACCESS_RECORDS_PER_MESSAGE),
});
export type SealedAccessRecordBatch = z.infer<typeof sealedAccessRecordBatchSchema>;
/** What one grant's part of a sealed batch holds once opened: the address of each of its records, by the record's id. */
export const sealedAddressesSchema = z.record(accessRecordSchema.shape.id, accessRecordSchema.shape.clientAddress.unwrap());

/** GET …/authorizations/{clientId}/daily-reads: reads and refused reads on each of the last 30 UTC days, today included. */
export const dailyReadsSchema = z
  .object({
    days: z
      .array(
        z.object({
          day: z
            .string()
            .regex(/^\d{4}-\d{2}-\d{2}$/)
            .meta({ description: 'The UTC day, YYYY-MM-DD' }),
          reads: z.int().min(0),
          refusals: z.int().min(0).meta({ description: 'Reads answered 4xx or 5xx' }),
        }),
      )
      .meta({ description: 'Oldest first, one entry a day, days without reads included' }),
  })
  .meta({ id: 'DailyReads' });
export type DailyReadsList = z.infer<typeof dailyReadsSchema>;
/** One day of it. */
export type DayOfReads = DailyReadsList['days'][number];
