export * from './networks.js';
export * from './schema.js';
export * from './secret.js';
export * from './load.js';
