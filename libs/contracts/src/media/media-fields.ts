import { Checked, describeWrongType } from '@igw/validation';

/** Characters as price lists count them: Unicode code points, not UTF-16 units. */
export function codePointCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** A non-empty string of at most `max` characters, counted as code points (what billing counts). */
export function IsTextOfAtMost(max: number): PropertyDecorator {
  return Checked('isTextOfAtMost', (value) => {
    if (typeof value !== 'string') return [`Expected a non-empty string. Received ${describeWrongType(value)}`];
    if (value === '') return ["Expected a non-empty string. Received ''"];
    // Only a text with more UTF-16 units than the limit can have too many code points.
    if (value.length > max) {
      const count = codePointCount(value);
      if (count > max) return [`Expected at most ${max} characters. Received ${count} characters`];
    }
    return [];
  });
}


export const PROVIDER_FIELD_DESCRIPTION =
  'Provider routing override, case-insensitive: `auto` (every source, by tier and weight), `fallback`, or a connection one of its sources names (its deployments alone)';
