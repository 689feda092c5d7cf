import { Body, Controller, Get, HttpCode, HttpStatus, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { ADMIN_TOKEN, AdminTokenThrottle, GatewayException, RequireAdminToken, secretsEqual } from '@igw/http';
import type { Request, Response } from 'express';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ConsoleCatalogueService, type ConsoleCatalogue } from './console-catalogue';
import { assertSameOriginWrite, CONSOLE_SESSION_COOKIE, ConsoleSessions, readCookie } from './console-sessions';

/** Where `npm run build` (tools/build.mjs) bundles the console: dist/apps/billing/console beside dist/apps/billing/src. */
export const CONSOLE_BUNDLE_DIR = path.resolve(__dirname, '../../console');
const ASSETS: Record<string, string> = { 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8' };

/**
 * Only this origin, for everything: the bundle's script and styles, the API calls, the login
 * form. No inline script or style, no other host, no framing.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Inference gateway console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="assets/app.css">
<script src="assets/app.js" defer></script>
</head>
<body><div id="app"></div><noscript>The console needs JavaScript.</noscript></body>
</html>
`;

/**
 * The sign-in form's 401. The admin API's own wording ("send it as Authorization: Bearer ...")
 * misleads someone who typed the token into the form: say which token is meant and where it is.
 */
export const WRONG_CONSOLE_TOKEN =
  'Unauthorized: that is not the admin token. Use the ADMIN_TOKEN billing runs with (npm start generates one and keeps it in DATA_DIR/admin-token, by default .data/admin-token).';

class ConsoleLoginDto {
  @IsString()
  @MaxLength(1024)
  token!: string;
}

function securityHeaders(response: Response): void {
  response.setHeader('Content-Security-Policy', CONSOLE_CSP);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('X-Frame-Options', 'DENY');
  response.setHeader('Referrer-Policy', 'no-referrer');
  response.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  response.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
}

/** The admin console: one page (routes after `#`), its bundle, and its session endpoints. */
@ApiExcludeController()
@Controller('console')
export class ConsoleController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly catalogue: ConsoleCatalogueService,
    @Inject(ADMIN_TOKEN) private readonly adminToken: string,
    private readonly throttle: AdminTokenThrottle,
  ) {}

  @Get()
  page(@Req() request: Request, @Res() response: Response): void {
    // Relative asset and API paths need the trailing slash (and keep working behind a path prefix).
    const url = new URL(request.originalUrl, 'http://host');
    if (!url.pathname.endsWith('/')) {
      // Relative, so a proxy serving billing under a path prefix keeps it.
      response.redirect(308, `${url.pathname.split('/').pop()}/${url.search}`);
      return;
    }
    securityHeaders(response);
    response.setHeader('Cache-Control', 'no-store');
    response.type('html').send(SHELL);
  }

  @Get('assets/:file')
  async asset(@Req() request: Request, @Res() response: Response): Promise<void> {
    const file = String(request.params.file);
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) throw new GatewayException(HttpStatus.NOT_FOUND, `Not Found: the console has no asset ${file}.`);
    const content = await readFile(path.join(CONSOLE_BUNDLE_DIR, file)).catch(() => undefined);
    if (!content) throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: the console is not built. Run npm run build (npm start builds it too).');
    securityHeaders(response);
    response.setHeader('Cache-Control', 'no-cache');
    response.type(type).send(content);
  }

  /** Whether the browser holds a live session (the page shows the login form when not). */
  @Get('api/session')
  session(@Req() request: Request): { authenticated: boolean; expiresAt: string | null } {
    const claims = this.sessions.verify(readCookie(request, CONSOLE_SESSION_COOKIE));
    return { authenticated: claims !== null, expiresAt: claims ? new Date(claims.exp).toISOString() : null };
  }

  /** Trades the admin token for a session cookie; the token is not kept by the browser. */
  @Post('api/login')
  @HttpCode(HttpStatus.NO_CONTENT)
  login(@Req() request: Request, @Res({ passthrough: true }) response: Response, @Body() body: ConsoleLoginDto): void {
    assertSameOriginWrite(request);
    const client = this.throttle.clientOf(request);
    this.throttle.refuseIfBlocked(client);
    if (!secretsEqual(body.token, this.adminToken)) {
      this.throttle.failed(client);
      throw new GatewayException(HttpStatus.UNAUTHORIZED, WRONG_CONSOLE_TOKEN);
    }
    this.throttle.succeeded(client);
    this.sessions.setCookie(request, response, this.sessions.issue());
  }

  @Post('api/logout')
  @HttpCode(HttpStatus.NO_CONTENT)
  logout(@Req() request: Request, @Res({ passthrough: true }) response: Response): void {
    assertSameOriginWrite(request);
    this.sessions.end(readCookie(request, CONSOLE_SESSION_COOKIE));
    this.sessions.clearCookie(request, response);
  }

  @Get('api/catalogue')
  @RequireAdminToken()
  readCatalogue(): Promise<ConsoleCatalogue> {
    return this.catalogue.read();
  }
}
