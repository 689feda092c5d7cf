// What other projects (apps/standalone) use of billing, reached as @igw/billing-app.
export { startBilling } from './billing.app';
export { BillingModule } from './billing.module';
