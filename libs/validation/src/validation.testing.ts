import { BadRequestException, type Type } from '@nestjs/common';
import { createValidationPipe } from './validation.pipe';

// For specs: a request body run through the real global pipe, exactly as it reaches a controller.

export async function validatedBody<T>(metatype: Type<T>, body: unknown): Promise<T> {
  return (await createValidationPipe().transform(body, { type: 'body', metatype })) as T;
}

/** The 400's message for a body the pipe must refuse; fails the test if it is accepted. */
export async function rejectionMessage(metatype: Type<unknown>, body: unknown): Promise<string> {
  try {
    await validatedBody(metatype, body);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestException);
    return (error as BadRequestException).message;
  }
  throw new Error(`expected ${JSON.stringify(body)} to be rejected`);
}
