/** Verification from public data: signals against their run's reveal, score records against their explanation. */
export * from './signals.js';
export * from './score.js';
export * from './journal.js';
export * from './read.js';
export { isLater, unlistedSubjects, type Equivocation, type RegistryCheck } from './findings.js';
