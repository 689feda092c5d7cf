import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ADMISSION_FIELDS, AVAILABLE_FIELDS, DEPARTURE_FIELDS, FIELD_SEPARATOR, luaFieldReader, packFields, RENEWAL_FIELDS } from './lua-arguments';

const lua = (name: string) => readFileSync(path.join(__dirname, 'lua', `${name}.lua`), 'utf8');
/** The field names a script reads from the record it calls `record`. */
const readsOf = (script: string, record: string) => [...script.matchAll(new RegExp(`\\b${record}\\.([A-Za-z]+)`, 'g'))].map((match) => match[1]);

describe('the limit scripts\' arguments', () => {
  it('pack a record\'s values in its field list\'s order, empty ones included', () => {
    const packed = packFields(RENEWAL_FIELDS, { holdMember: '', holdsKey: '', ttlMs: 60_000, lapse: 5, slotId: 's', runningKey: 'k', keyHoldsKey: '' });
    expect(packed.split(FIELD_SEPARATOR)).toEqual(['k', 's', '5', '60000', '', '', '']);
  });

  it('are read in the scripts only by names the lists hold', () => {
    const uses: Array<[string, string, readonly string[]]> = [
      ['admit', 'a', ADMISSION_FIELDS],
      ['admit', 'd', DEPARTURE_FIELDS],
      ['renew', 'r', RENEWAL_FIELDS],
      ['available', 'q', AVAILABLE_FIELDS],
    ];
    for (const [script, record, fields] of uses) {
      const reads = readsOf(lua(script), record);
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.filter((field) => !fields.includes(field))).toEqual([]);
    }
  });

  it('give the scripts every list, each name once', () => {
    const prelude = luaFieldReader();
    for (const [name, fields] of Object.entries({ ADMISSION_FIELDS, DEPARTURE_FIELDS, RENEWAL_FIELDS, AVAILABLE_FIELDS })) {
      expect(new Set(fields).size).toBe(fields.length);
      expect(prelude).toContain(`local ${name} = { ${fields.map((field) => `'${field}'`).join(', ')} }`);
    }
  });
});
