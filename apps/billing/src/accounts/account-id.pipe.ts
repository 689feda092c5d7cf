import { HttpStatus, ParseUUIDPipe } from '@nestjs/common';
import { GatewayException } from '@igw/http';

/** Account ids are UUIDs; anything else cannot name an account, so it is a 404, not a 500. */
export const AccountIdPipe = new ParseUUIDPipe({ exceptionFactory: () => new GatewayException(HttpStatus.NOT_FOUND, 'Account not found') });
