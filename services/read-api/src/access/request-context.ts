import type { Response } from 'express';
import type { CredentialView } from '@rsd/ports';
import type { CustomerPath } from '../customers/customer-resources';

/**
 * What the steps of the order of checks learn about a request, handed from one step to the next in
 * `res.locals`. Each getter fails loudly if a step runs out of order: that is a wiring bug, not a
 * client error.
 */
interface CustomerRequestContext {
  path?: CustomerPath;
  clientId?: string;
  credential?: CredentialView;
}

function contextOf(res: Response): CustomerRequestContext {
  const locals = res.locals as { customerRequest?: CustomerRequestContext };
  locals.customerRequest ??= {};
  return locals.customerRequest;
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is not known yet: a check ran out of order`);
  return value;
}

export const requestContext = {
  setPath: (res: Response, path: CustomerPath): void => {
    contextOf(res).path = path;
  },
  path: (res: Response): CustomerPath => required(contextOf(res).path, 'the customer path'),
  setClientId: (res: Response, clientId: string): void => {
    contextOf(res).clientId = clientId;
  },
  clientId: (res: Response): string => required(contextOf(res).clientId, 'the Client ID'),
  setCredential: (res: Response, credential: CredentialView): void => {
    contextOf(res).credential = credential;
  },
  credential: (res: Response): CredentialView => required(contextOf(res).credential, 'the credential'),
};
