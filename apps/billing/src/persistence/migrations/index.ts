import { InitBilling1795270721956 } from './1795270721956-init-billing';
export const BILLING_MIGRATIONS = [InitBilling1795270721956];
