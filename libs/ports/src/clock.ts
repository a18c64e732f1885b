/** Time is passed in, never read from a global, so expiry and windows can be tested. */
export interface Clock {
  now(): Date;
}
