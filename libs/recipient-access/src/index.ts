export * from './authenticate-recipient';
export * from './edge-policy';
export * from './rate-limits';
export * from './recipient-access-config';
export * from './recipient-app';
export * from './account-authenticator';
export * from './current-key';
export * from './portfolio-query';
