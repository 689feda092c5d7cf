/** Set by the global setup: the PostgreSQL server on which tests create their databases. */
export const TEST_DATABASE_SERVER_VARIABLE = 'IGW_TEST_DATABASE_SERVER';
