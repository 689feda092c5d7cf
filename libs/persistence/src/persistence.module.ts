import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { openServiceDataSource, type ServicePersistence } from './service-data-source';

@Injectable()
class DataSourceCloser implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

/** Gives a service its own DataSource (its schema, its entities), migrated before anything uses it. */
@Module({})
export class PersistenceModule {
  static forService(databaseUrl: string, persistence: ServicePersistence): DynamicModule {
    return {
      module: PersistenceModule,
      global: true,
      providers: [{ provide: DataSource, useFactory: () => openServiceDataSource(databaseUrl, persistence) }, DataSourceCloser],
      exports: [DataSource],
    };
  }
}
