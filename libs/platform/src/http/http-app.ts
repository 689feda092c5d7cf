import { Logger, type DynamicModule, type INestApplication, type LogLevel, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { AllExceptionsFilter } from '../errors/all-exceptions.filter';
import { createValidationPipe } from '../validation/validation.pipe';
import { bodyParserErrorHandler, jsonBodyParser } from './body-parsing';
import { requestIdMiddleware } from './request-context';

export interface HttpAppOptions {
  name: string;
  host: string;
  port: number;
  bodyLimit: string;
  logLevel: LogLevel;
  swagger?: { title: string; description: string };
}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/**
 * Builds and starts one service's HTTP app with the cross-cutting pieces every service
 * shares: request ids, JSON parsing with a size limit, the error body, validation, Swagger.
 */
export async function startHttpApp(rootModule: Type | DynamicModule, options: HttpAppOptions): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(rootModule, {
    bodyParser: false,
    logger: LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(options.logLevel) + 1),
  });
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestIdMiddleware);
  app.use(jsonBodyParser(options.bodyLimit));
  app.use(bodyParserErrorHandler);
  app.useGlobalFilters(new AllExceptionsFilter());
  app.useGlobalPipes(createValidationPipe());
  if (options.swagger) {
    const config = new DocumentBuilder()
      .setTitle(options.swagger.title)
      .setDescription(options.swagger.description)
      .setVersion('1.0.0')
      .addBearerAuth()
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' }, 'admin')
      .build();
    SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, config), { jsonDocumentUrl: 'docs-json' });
  }
  try {
    await app.listen(options.port, options.host);
  } catch (error) {
    // A failed start (port in use, a bootstrap hook refusing bad data) must not leave the
    // app's database and queue connections behind.
    await app.close().catch(() => undefined);
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') {
      throw new Error(`${options.name} could not listen on ${options.host}:${options.port} (${code === 'EADDRINUSE' ? 'port already in use' : 'permission denied'})`, { cause: error });
    }
    throw error;
  }
  new Logger(options.name).log(`listening on ${await app.getUrl()}`);
  return app;
}
