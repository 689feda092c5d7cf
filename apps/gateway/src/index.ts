// What other projects (apps/standalone) use of the gateway, reached as @igw/gateway-app.
export { CatalogueSnapshotService } from './catalogue/catalogue-snapshot.service';
export { startGateway, stopGateway } from './gateway.app';
export { GatewayModule } from './gateway.module';
export { gatewayConnections } from './paid-requests/upstream-estate';
export { gatewayPersistence } from './gateway.persistence';
