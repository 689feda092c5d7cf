import { KeyRules1795861048839 } from './1795861048839-key-rules';
import { ClientRequestId1795714134807 } from './1795714134807-client-request-id';
import { RejectedUsage1795524174460 } from './1795524174460-rejected-usage';
import { AccountUsageSpent1795278524586 } from './1795278524586-account-usage-spent';
import { AccountLimitOverrides1795274366497 } from './1795274366497-account-limit-overrides';
import { RecordLedgerPrices1795272087058 } from './1795272087058-record-ledger-prices';
import { InitBilling1795270721956 } from './1795270721956-init-billing';
export const BILLING_MIGRATIONS = [InitBilling1795270721956, RecordLedgerPrices1795272087058, AccountLimitOverrides1795274366497, AccountUsageSpent1795278524586, RejectedUsage1795524174460, ClientRequestId1795714134807, KeyRules1795861048839];
