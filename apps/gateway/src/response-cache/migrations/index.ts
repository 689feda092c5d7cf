import { ResponseCacheEntries1796327721079 } from './1796327721079-response-cache-entries';
export const GATEWAY_MIGRATIONS = [ResponseCacheEntries1796327721079];
