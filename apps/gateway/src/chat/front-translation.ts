import { HttpStatus } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import { GatewayException } from '@igw/http';

// What the fronts of the chat pipeline (Messages, Gemini) share when they translate their
// request into a chat request: the refusal of a field, and the parts the chat request cannot carry.

/** A 400 naming the field of the front's request and why it cannot be served. */
export function refuseField(path: string, why: string): never {
  throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${path}: ${why}`);
}

/**
 * While a translation for a model with native sources runs (translateForNative): the refusals
 * of parts the chat request cannot carry, which are left out of it rather than refused. A
 * translation is synchronous, so no other one runs meanwhile.
 */
let leftOut: string[] | undefined;

/** Refuses a part the chat request cannot carry, or (translating for native sources) leaves it out. */
export function cannotCarry(path: string, why: string): undefined {
  if (leftOut === undefined) refuseField(path, why);
  leftOut.push(`${ErrorMessages.bodyValidationPrefix} ${path}: ${why}`);
  return undefined;
}

/**
 * The chat request for a model some of whose sources take the front's request natively: parts
 * the chat request cannot carry are left out of it, and `untranslatable` says why a source that
 * needs the translation cannot be sent it.
 */
export function translateForNative<Request>(translate: () => Request): { request: Request; untranslatable?: string } {
  leftOut = [];
  try {
    const request = translate();
    return leftOut.length > 0 ? { request, untranslatable: leftOut[0] } : { request };
  } finally {
    leftOut = undefined;
  }
}
