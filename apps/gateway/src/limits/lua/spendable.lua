-- The money part of an admission, shared by the admit and available scripts: takes the newer
-- snapshot, lets `settled` catch up with billing, drops lapsed holds, and returns what can still
-- be spent. Amounts stay below 2^53 micro-credits, where Lua's numbers are exact. A hold's
-- amount rides in its member (`<hold id>:<amount>`), so a lapsed hold is released without
-- another look-up.
local function spendable(account, holds, balance, version, usageSpent, now)
  local money = redis.call('HMGET', account, 'version', 'usageSpent', 'settled', 'held', 'balance')
  if tonumber(version) > tonumber(money[1] or '-1') then
    redis.call('HSET', account, 'balance', balance, 'version', version, 'usageSpent', usageSpent)
    money[2], money[5] = usageSpent, balance
  end
  local applied = tonumber(money[2])
  local settled = tonumber(money[3] or '0')
  if settled < applied then
    redis.call('HSET', account, 'settled', money[2])
    settled = applied
  end
  local held = tonumber(money[4] or '0')
  local lapsed = redis.call('ZRANGEBYSCORE', holds, '-inf', now)
  if #lapsed > 0 then
    local released = 0
    for _, member in ipairs(lapsed) do released = released + tonumber(string.match(member, ':(%d+)$')) end
    redis.call('ZREMRANGEBYSCORE', holds, '-inf', now)
    redis.call('HINCRBY', account, 'held', string.format('%d', -released))
    held = held - released
  end
  return tonumber(money[5]) - (settled - applied) - held
end
