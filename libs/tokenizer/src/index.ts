export * from './token-estimate';
export * from './token-budget';
export * from './token-count-pool';
