export * from './embedded-postgres';
export * from './service-data-source';
export * from './scratch-database';
export * from './schema-drift';
export * from './persistence.module';
