-- What an account can still spend, in micro-credits as a string; false when this store has
-- never seen the account. ARGV[1]: one packed argument (AVAILABLE_FIELDS, lua-arguments.ts).
local q = readFields(ARGV[1], AVAILABLE_FIELDS)
if redis.call('HEXISTS', q.accountKey, 'balance') == 0 then return false end
return string.format('%d', spendable(q.accountKey, q.holdsKey, '0', '-1', '0', q.now))
