// What the differential specs share when they mutate a JSON body: its value type, and every
// place in it (a parent and a key or index) that a mutation can replace or remove.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type Slot = [JsonObject | Json[], string | number];

/** Every slot of a value, depth first, parents before their children. */
export function slotsOf(value: Json, into: Slot[] = []): Slot[] {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      into.push([value, index]);
      slotsOf(item, into);
    });
  } else if (value && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      into.push([value, key]);
      slotsOf(value[key], into);
    }
  }
  return into;
}
