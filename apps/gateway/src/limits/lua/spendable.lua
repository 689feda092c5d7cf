-- The money part of an admission, shared by the admit and available scripts. Amounts stay below
-- 2^53 micro-credits, where Lua's numbers are exact. A hold's amount rides in its member
-- (`<hold id>:<amount>`), so a lapsed hold is released without another look-up.

-- Drops the lapsed holds of `holds` from `money`'s `held`; returns what is still held.
local function heldAfterLapses(money, holds, held, now)
  local lapsed = redis.call('ZRANGEBYSCORE', holds, '-inf', now)
  if #lapsed == 0 then return held end
  local released = 0
  for _, member in ipairs(lapsed) do released = released + tonumber(string.match(member, ':(%d+)$')) end
  redis.call('ZREMRANGEBYSCORE', holds, '-inf', now)
  redis.call('HINCRBY', money, 'held', string.format('%d', -released))
  return held - released
end

-- An account: takes the newer snapshot, lets `settled` catch up with billing, drops lapsed
-- holds, and returns what can still be spent.
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
  local held = heldAfterLapses(account, holds, tonumber(money[4] or '0'), now)
  return tonumber(money[5]) - (settled - applied) - held
end

-- A key's budget, the same way: billing's spend in the period it counts (nothing when that
-- period is over), the charges metered and not yet applied, and the holds.
local function keySpendable(key, holds, limit, version, periodStart, spent, applied, currentPeriodStart, now)
  local money = redis.call('HMGET', key, 'version', 'periodStart', 'spent', 'applied', 'settled', 'held')
  if tonumber(version) > tonumber(money[1] or '-1') then
    redis.call('HSET', key, 'version', version, 'periodStart', periodStart, 'spent', spent, 'applied', applied)
    money[2], money[3], money[4] = periodStart, spent, applied
  end
  local appliedTotal = tonumber(money[4])
  local settled = tonumber(money[5] or '0')
  if settled < appliedTotal then
    redis.call('HSET', key, 'settled', money[4])
    settled = appliedTotal
  end
  local held = heldAfterLapses(key, holds, tonumber(money[6] or '0'), now)
  local spentInPeriod = 0
  if tonumber(money[2]) >= tonumber(currentPeriodStart) then spentInPeriod = tonumber(money[3]) end
  return tonumber(limit) - spentInPeriod - (settled - appliedTotal) - held
end
