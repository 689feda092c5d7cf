import { Redis } from 'ioredis';
import { ADMISSION_FIELDS, luaFieldReader, packFields, type AdmissionArgument } from './lua-arguments';

const redisUrl = process.env.REDIS_URL;
const describeOnRedis = redisUrl ? describe : describe.skip;

describeOnRedis('the limit scripts\' field reader, in Redis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl as string);
  });
  afterAll(() => redis.disconnect());

  it('reads every field of a packed record back by its name, empty ones and the last included', async () => {
    const record = Object.fromEntries(ADMISSION_FIELDS.map((field, index) => [field, `${field}-${index}`])) as AdmissionArgument;
    record.hourKey = '';
    record.now = 1_764_000_000_123;
    const script = `${luaFieldReader()}
local a = readFields(ARGV[1], ADMISSION_FIELDS)
local values = {}
for index, name in ipairs(ADMISSION_FIELDS) do values[index] = a[name] end
return values`;
    const values = (await redis.eval(script, 0, packFields(ADMISSION_FIELDS, record))) as string[];
    expect(values).toEqual(ADMISSION_FIELDS.map((field) => String(record[field])));
  });
});
