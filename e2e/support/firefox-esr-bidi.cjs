#!/usr/bin/env node
/**
 * Starts Debian's Firefox ESR for playwright-core's WebDriver BiDi client ("moz-firefox" channel).
 *
 * playwright-core 1.65 sends `emulation.setMediaFeaturesOverride` when it opens every browser
 * context, and Firefox ESR 153 does not implement that BiDi command yet ("unknown command"), so no
 * page could ever open. This launcher sits between the two: it starts the real Firefox with the
 * arguments Playwright gave, relays every BiDi message unchanged, and answers that one command
 * itself when it asks for the light colour scheme or none, which the profile pins with Firefox's own
 * pref (`layout.css.prefers-color-scheme.content-override` = 1, see browsers.ts). A dark or other
 * scheme is refused, so nothing is claimed that Firefox did not do.
 *
 * Playwright finds the BiDi endpoint in the browser's stderr, so the relay's address is printed
 * there in Firefox's own words.
 */
'use strict';
const { spawn } = require('node:child_process');
const { ws: WebSocket, wsServer: WebSocketServer } = require('playwright-core/lib/utilsBundle');

const FIREFOX = process.env.FIREFOX_ESR_PATH || '/usr/bin/firefox-esr';
const LISTENING = /WebDriver BiDi listening on (ws:\/\/\S+)/;
const MEDIA_COMMAND = 'emulation.setMediaFeaturesOverride';

const firefox = spawn(FIREFOX, process.argv.slice(2), { stdio: ['ignore', 'inherit', 'pipe'] });
firefox.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => firefox.kill(signal));

let pending = '';
let relayed = false;
firefox.stderr.on('data', (chunk) => {
  if (relayed) return void process.stderr.write(chunk);
  pending += chunk.toString();
  const lines = pending.split('\n');
  pending = lines.pop();
  for (const line of lines) {
    const match = !relayed && LISTENING.exec(line);
    if (match) {
      relayed = true;
      startRelay(match[1]);
    } else process.stderr.write(`${line}\n`);
  }
  if (relayed && pending) process.stderr.write(pending);
});

function mediaAnswer(message) {
  const scheme = message.params?.features?.['prefers-color-scheme'];
  // Absent or null: Playwright asks for no particular scheme (its default); the pinned light one stands.
  if (scheme === 'light' || scheme === null || scheme === undefined) return { type: 'success', id: message.id, result: {} };
  return { type: 'error', id: message.id, error: 'unsupported operation', message: `this Firefox launcher only emulates the light colour scheme, not ${JSON.stringify(scheme)}` };
}

function startRelay(firefoxEndpoint) {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 256 * 1024 * 1024 });
  server.on('listening', () => process.stderr.write(`WebDriver BiDi listening on ws://127.0.0.1:${server.address().port}\n`));
  server.on('connection', (client, request) => {
    const upstream = new WebSocket(`${firefoxEndpoint}${request.url}`, { maxPayload: 256 * 1024 * 1024 });
    const early = [];
    upstream.on('open', () => early.splice(0).forEach((data) => upstream.send(data)));
    upstream.on('message', (data) => client.send(data.toString()));
    upstream.on('close', () => client.close());
    upstream.on('error', () => client.close());
    client.on('message', (data) => {
      const text = data.toString();
      const message = JSON.parse(text);
      if (message.method === MEDIA_COMMAND) return void client.send(JSON.stringify(mediaAnswer(message)));
      if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
      else early.push(text);
    });
    client.on('close', () => upstream.close());
  });
}
