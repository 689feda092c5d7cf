// What other projects use of billing, reached as @igw/billing-app: apps/standalone starts it,
// tools/db generates and checks its migrations from its persistence declaration.
export { startBilling } from './billing.app';
export { BillingModule } from './billing.module';
export { billingPersistence } from './persistence/billing.persistence';
