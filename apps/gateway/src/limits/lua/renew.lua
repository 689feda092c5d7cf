-- Running requests' slots and holds live longer, each renewal one packed argument
-- (lua-arguments.ts). XX: one already given back or lapsed is never brought back (its
-- departure, or the lapse, already counted it out).
for i = 1, #ARGV do
  local r = readFields(ARGV[i], RENEWAL_FIELDS)
  local ttl = tonumber(r.ttlMs)
  if redis.call('ZADD', r.runningKey, 'XX', 'CH', r.lapse, r.slotId) == 1 and redis.call('PTTL', r.runningKey) < ttl then
    redis.call('PEXPIRE', r.runningKey, ttl)
  end
  if r.holdsKey ~= '' then redis.call('ZADD', r.holdsKey, 'XX', r.lapse, r.holdMember) end
  if r.keyHoldsKey ~= '' then redis.call('ZADD', r.keyHoldsKey, 'XX', r.lapse, r.holdMember) end
end
return #ARGV
