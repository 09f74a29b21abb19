export * from './schemas.js';
export * from './hashing.js';
export * from './build.js';
export * from './parse.js';
