/** A real PostgreSQL server started by the tests (the devtools helper; `.ci/run` installs PostgreSQL when missing). */
export { startPostgres, type PostgresServer } from '../../src/devtools/postgres.js';
