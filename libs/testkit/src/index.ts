export * from './http';
export * from './tokens';
export * from './fixtures';
export * from './contracts';
export * from './infrastructure';
