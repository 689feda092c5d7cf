import { Controller, Get, HttpStatus, Inject, Logger } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { GatewayException } from '../errors/gateway.exception';

export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

const CHECK_TIMEOUT_MS = 2_000;

@ApiTags('health')
@Controller()
export class HealthController {
  private readonly logger = new Logger('Readiness');
  /** The failures last logged, so that a probe every few seconds logs a failure once, not each time. */
  private loggedFailures = '';

  constructor(@Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[]) {}

  /** Liveness: the process answers. */
  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Readiness: every dependency (database, queue, snapshot) answers in time. The answer names
   * the checks that failed, never why: a dependency's error (a database's address, a driver's
   * message) is for the operator's log, not for whoever can reach the port.
   */
  @Get('readyz')
  @ApiOperation({ summary: 'Readiness: the database and the queue answer (503 naming the checks that failed otherwise; why is in the log)' })
  @ApiOkResponse({ schema: { example: { status: 'ok', checks: { database: 'ok', queue: 'ok' } } } })
  async ready(): Promise<{ status: 'ok'; checks: Record<string, string> }> {
    const results = await Promise.all(
      this.checks.map(async ({ name, check }) => {
        try {
          await withTimeout(check(), CHECK_TIMEOUT_MS);
          return [name, 'ok'] as const;
        } catch (error) {
          return [name, error instanceof Error ? error.message : String(error)] as const;
        }
      }),
    );
    const failed = results.filter(([, status]) => status !== 'ok');
    const failures = failed.map(([name, why]) => `${name} (${why})`).join(', ');
    if (failures !== this.loggedFailures) {
      if (failures) this.logger.warn(`not ready: ${failures}`);
      else this.logger.log('ready again');
      this.loggedFailures = failures;
    }
    if (failed.length > 0) {
      throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, `Not ready: ${failed.map(([name]) => name).join(', ')}`);
    }
    return { status: 'ok', checks: Object.fromEntries(results) };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
