-- One round trip for what a turn of the event loop produced: first the requests that finished
-- (slots and holds given back, their cost counted as spent), then the new ones admitted in
-- order, each checked and counted atomically (credits, the key's budget, the free plan's hour,
-- the key's minute, its in-flight count), so replicas share the limits exactly. Key names travel in ARGV (already
-- prefixed) because a batch names a varying number of keys: the store needs a single Redis,
-- not a cluster.
-- ARGV: the minute's and the hour's length and an idle account's lifetime (ms), the number of
-- departures, then each departure and each admission as one packed argument (lua-arguments.ts).
-- Returns two numbers per admission: its code (0 admitted, else the refusal's, see
-- redis-limit-store.ts) and, for a refusal, the retry-after in ms.
local minuteMs, hourMs, accountTtl = ARGV[1], ARGV[2], ARGV[3]
local departureCount = tonumber(ARGV[4])

for i = 5, 4 + departureCount do
  local d = readFields(ARGV[i], DEPARTURE_FIELDS)
  redis.call('ZREM', d.runningKey, d.slotId)
  if d.holdMember ~= '' then
    -- Given back once: a second departure of the same hold changes nothing.
    if redis.call('ZREM', d.holdsKey, d.holdMember) == 1 then redis.call('HINCRBY', d.accountKey, 'held', '-' .. d.holdMicro) end
    if d.spentMicro ~= '0' then redis.call('HINCRBY', d.accountKey, 'settled', d.spentMicro) end
    if d.keyHoldsKey ~= '' then
      if redis.call('ZREM', d.keyHoldsKey, d.holdMember) == 1 then redis.call('HINCRBY', d.keyMoneyKey, 'held', '-' .. d.holdMicro) end
      if d.spentMicro ~= '0' then redis.call('HINCRBY', d.keyMoneyKey, 'settled', d.spentMicro) end
    end
  end
end

local function admit(a)
  local now = a.now
  local withCredits = a.withCredits == '1'
  if withCredits then
    local left = spendable(a.accountKey, a.holdsKey, a.balanceMicro, a.balanceVersion, a.usageSpentMicro, now)
    -- The whole hold must fit: what a request may cost is never more than is left.
    if left <= 0 or left < tonumber(a.holdMicro) then return 4, 0 end
    -- The key's budget, when it has one, the same way and in the same step.
    if a.keyHoldsKey ~= '' then
      local keyLeft = keySpendable(a.keyMoneyKey, a.keyHoldsKey, a.keyLimitMicro, a.keyVersion, a.keyPeriodStart, a.keySpentMicro, a.keyAppliedMicro, a.keyCurrentPeriodStart, now)
      if keyLeft <= 0 or keyLeft < tonumber(a.holdMicro) then return 5, 0 end
    end
  end
  -- A hold added to a request admitted already: its minute and slot were counted then.
  local holdOnly = a.holdOnly == '1'
  local freeLimit = tonumber(a.freeHourlyLimit)
  if holdOnly then freeLimit = 0 end
  if freeLimit > 0 then
    local used = tonumber(redis.call('GET', a.hourKey) or '0')
    if used >= freeLimit then return 3, redis.call('PTTL', a.hourKey) end
  end
  if not holdOnly then
    local minute = redis.call('INCR', a.minuteKey)
    if minute == 1 then redis.call('PEXPIRE', a.minuteKey, minuteMs) end
    if minute > tonumber(a.perMinuteLimit) then return 1, redis.call('PTTL', a.minuteKey) end
    -- A slot per request in flight, lapsing on its own: a departure lost on the way (Redis
    -- restarted, a replica killed) cannot hold a key at its limit for longer than the slot's life.
    redis.call('ZREMRANGEBYSCORE', a.runningKey, '-inf', now)
    if redis.call('ZCARD', a.runningKey) >= tonumber(a.concurrencyLimit) then return 2, 1000 end
    redis.call('ZADD', a.runningKey, now + a.slotTtlMs, a.slotId)
    redis.call('PEXPIRE', a.runningKey, a.slotTtlMs)
  end
  if freeLimit > 0 then
    if redis.call('INCR', a.hourKey) == 1 then redis.call('PEXPIRE', a.hourKey, hourMs) end
  end
  if withCredits then
    redis.call('ZADD', a.holdsKey, a.holdLapse, a.holdMember)
    redis.call('HINCRBY', a.accountKey, 'held', a.holdMicro)
    redis.call('PEXPIRE', a.accountKey, accountTtl)
    redis.call('PEXPIRE', a.holdsKey, accountTtl)
    if a.keyHoldsKey ~= '' then
      redis.call('ZADD', a.keyHoldsKey, a.holdLapse, a.holdMember)
      redis.call('HINCRBY', a.keyMoneyKey, 'held', a.holdMicro)
      redis.call('PEXPIRE', a.keyMoneyKey, accountTtl)
      redis.call('PEXPIRE', a.keyHoldsKey, accountTtl)
    end
  end
  return 0, 0
end

local results = {}
for i = 5 + departureCount, #ARGV do
  local code, retryAfterMs = admit(readFields(ARGV[i], ADMISSION_FIELDS))
  results[#results + 1] = code
  results[#results + 1] = retryAfterMs
end
return results
