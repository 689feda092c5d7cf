import { BadRequestException } from '@nestjs/common';
import { IsIn, IsInt, IsString, Min, ValidateNested, ValidationError } from 'class-validator';
import { Type } from 'class-transformer';
import { createValidationPipe, formatValidationErrors, ISSUES_SHOWN, PIPE_CHECKED_MEMBERS, PIPE_CHECKED_VALUES } from './validation.pipe';

class Item {
  @IsIn(['user', 'system']) role!: string;
}

class Body {
  @IsString() model!: string;
  @IsInt() @Min(1) count!: number;
  @ValidateNested({ each: true }) @Type(() => Item) items!: Item[];
}

async function messageFor(value: unknown): Promise<string> {
  try {
    await createValidationPipe().transform(value, { type: 'body', metatype: Body });
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestException);
    return (error as BadRequestException).message;
  }
  throw new Error('expected a validation error');
}

describe('validation messages', () => {
  it('refuse a body of more objects, arrays and members than the pipe checks, before copying any of it', async () => {
    // The body, its four members, `items` and `junk` are seven; each empty object one more.
    const body = { model: 'm', count: 1, items: [], junk: Array.from({ length: PIPE_CHECKED_VALUES - 6 }, () => ({})) };
    expect(await messageFor(body)).toBe(`Body validation error! Expected at most ${PIPE_CHECKED_VALUES} objects, arrays and object members in the body. Received more`);
    body.junk.pop();
    await expect(createValidationPipe().transform(body, { type: 'body', metatype: Body })).resolves.toBeInstanceOf(Body);
  });

  it('refuse an object of more members than the pipe checks (its time grows with their square)', async () => {
    const members = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, 1]));
    const body = { model: 'm', count: 1, items: [], junk: members(PIPE_CHECKED_MEMBERS + 1) };
    expect(await messageFor(body)).toBe(`Body validation error! Expected at most ${PIPE_CHECKED_MEMBERS} members in an object. Received one of ${PIPE_CHECKED_MEMBERS + 1}`);
    body.junk = members(PIPE_CHECKED_MEMBERS);
    await expect(createValidationPipe().transform(body, { type: 'body', metatype: Body })).resolves.toBeInstanceOf(Body);
  });

  it('take any number of plain values (token ids), which cost the pipe little', async () => {
    const body = { model: 'm', count: 1, items: [], tokens: Array.from({ length: 1_000 }, () => Array.from({ length: 1_000 }, (_, id) => id)) };
    await expect(createValidationPipe().transform(body, { type: 'body', metatype: Body })).resolves.toBeInstanceOf(Body);
  });

  it(`list the first ${ISSUES_SHOWN} issues and count the rest, however many items are bad`, async () => {
    const message = await messageFor({ model: 'm', count: 1, items: Array.from({ length: 5_000 }, () => ({ role: 'robot' })) });
    const parts = message.split('; ');
    expect(parts).toHaveLength(ISSUES_SHOWN + 1);
    expect(parts[0]).toBe("Body validation error! items[0].role: role must be one of the following values: user, system. Received 'robot'");
    expect(parts[ISSUES_SHOWN - 1]).toMatch(new RegExp(`^items\\[${ISSUES_SHOWN - 1}\\]\\.role: `));
    expect(parts[ISSUES_SHOWN]).toBe(`and ${5_000 - ISSUES_SHOWN} more`);
  });

  it('start with the spec prefix and name each field by its path with what was received', async () => {
    const message = await messageFor({ model: 42, count: 0, items: [{ role: 'user' }, { role: 'robot' }] });
    expect(message.startsWith('Body validation error! ')).toBe(true);
    expect(message).toMatch(/model: model must be a string\. Received number 42/);
    expect(message).toMatch(/count: count must not be less than 1\. Received number 0/);
    expect(message).toMatch(/items\[1\]\.role: .*Received 'robot'/);
    expect(message).not.toMatch(/items\[0\]/);
  });

  it('passes a valid body through, transformed to the DTO class', async () => {
    const value = await createValidationPipe().transform({ model: 'm', count: 2, items: [] }, { type: 'body', metatype: Body });
    expect(value).toBeInstanceOf(Body);
  });

  it('resolve the relative issue lines of structure validators and join every issue with "; "', () => {
    const tools = Object.assign(new ValidationError(), {
      property: 'tools',
      value: [],
      children: [],
      constraints: { toolList: "[3].function.name: Expected 1-64 letters, digits, underscores or dashes. Received 'bad name!'\n[4].type: Expected a non-empty string. Received nothing" },
    });
    expect(formatValidationErrors([tools])).toBe(
      "Body validation error! tools[3].function.name: Expected 1-64 letters, digits, underscores or dashes. Received 'bad name!'; tools[4].type: Expected a non-empty string. Received nothing",
    );
  });

  it('say the body must be an object when nothing more precise is known', () => {
    expect(formatValidationErrors([])).toBe('Body validation error! the body must be a JSON object');
  });
});
