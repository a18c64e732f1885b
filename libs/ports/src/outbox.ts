/** An event the record still owes the event log (transactional outbox). */
export interface OutboxEntry {
  id: string;
  topic: string;
  key: string;
  value: string;
}

export interface PendingOutbox {
  /** The Client ID of the authorization, the id of the recipient account (decision 42) or of the access review (decision 54) that owes the entries. */
  clientId: string;
  entries: OutboxEntry[];
}
