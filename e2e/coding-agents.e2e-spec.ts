import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, OpenAIProvider, run, Runner, tool } from '@openai/agents';
import { z } from 'zod';
import { eventually } from '@igw/testing';
import { startEmulator, type RecordedRequest, type RunningEmulator } from '../tools/emulator/src/emulator';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

const ROOT = path.resolve(__dirname, '..');
const CODEX = path.join(ROOT, 'node_modules/.bin/codex');
const CLAUDE = path.join(ROOT, 'node_modules/.bin/claude');
const GEMINI = path.join(ROOT, 'node_modules/.bin/gemini');
/** The ledger's endpoint of a Gemini API call. */
const GEMINI_ENDPOINT = 'generateContent';
/** An agent's whole run (two model turns and a tool) takes about a second here; past this it is stuck. */
const AGENT_RUN_MS = 45_000;
/** A run at its limit, then the ledger's wait. */
const AGENT_TEST_MS = AGENT_RUN_MS + 30_000;
const FILE = 'agent-note.txt';
const TEXT = 'Written by a coding agent through the gateway.';
const FINAL = `Created ${FILE} with the requested text.`;
const TASK = `Create a file named ${FILE} containing exactly: ${TEXT}`;

interface AgentRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs an agent's binary as a user would from a shell, with stdin closed (a piped stdin is read
 * as more prompt) and only the environment given (no key or base URL leaks in from this process).
 * A run that outlives AGENT_RUN_MS is killed and reported, never waited on.
 */
function runAgent(binary: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<AgentRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd, env: { PATH: process.env.PATH, LANG: 'C.UTF-8', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), AGENT_RUN_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The upstream chat requests the emulator received for one upstream model since `since` requests (OpenAI and Anthropic formats name it in the body, Google's in the path). */
function upstreamTurns(emulator: RunningEmulator, upstreamModel: string, since: number): RecordedRequest[] {
  return emulator.requests
    .slice(since)
    .filter((request) => (request.body as { model?: string } | undefined)?.model === upstreamModel || request.path.startsWith(`/v1beta/models/${upstreamModel}:`));
}

/**
 * The text of the tool result the request ends with (what the agent's tool returned), in the
 * OpenAI chat, Anthropic, Google or OpenAI Responses format (there a `function_call_output`
 * item answering a `function_call` item of the same input).
 */
function endingToolResult(request: RecordedRequest): string | undefined {
  const body = request.body as { messages?: Array<{ role: string; content: unknown }>; input?: unknown; contents?: Array<{ parts?: Array<{ functionResponse?: { response?: unknown } }> }> };
  if (Array.isArray(body.contents)) {
    const response = body.contents.at(-1)?.parts?.find((part) => part.functionResponse !== undefined)?.functionResponse?.response;
    return response === undefined ? undefined : JSON.stringify(response);
  }
  if (Array.isArray(body.input)) {
    const items = body.input as Array<{ type?: string; call_id?: string; output?: unknown }>;
    const last = items.at(-1);
    if (last?.type !== 'function_call_output' || !items.some((item) => item.type === 'function_call' && item.call_id === last.call_id)) return undefined;
    return typeof last.output === 'string' ? last.output : JSON.stringify(last.output);
  }
  const last = body.messages?.at(-1);
  if (last?.role === 'tool') return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  if (last?.role === 'user' && Array.isArray(last.content)) {
    const result = (last.content as Array<{ type: string; content?: unknown }>).find((block) => block.type === 'tool_result');
    if (result !== undefined) return typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
  }
  return undefined;
}

/**
 * The real coding agents, run as their users run them, through the standalone gateway to
 * upstreams played by the emulator (an OpenAI source taking the Responses API natively, an
 * OpenAI-format source it is translated for, and an Anthropic source), scripted to
 * answer the agent's first turn with the tool call that writes a file and the next one with a
 * final message: Codex CLI over the Responses API, Claude Code over the Messages API, the Gemini
 * CLI over the Gemini API (natively to a Google source, translated to an OpenAI-format one), and the
 * OpenAI Agents SDK's tool loop. Each run must do the task (the file exists with the text),
 * exit 0 and leave one ledger row a turn on the key's account. A binary that cannot run fails
 * its test: nothing here is skipped.
 */
describe('Coding agents through the gateway, against the emulator', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  const scratch: string[] = [];

  const scratchDir = async (prefix: string): Promise<string> => {
    const dir = await mkdtemp(path.join(tmpdir(), prefix));
    scratch.push(dir);
    return dir;
  };

  /** The account's rows once `turns` are in the ledger (billing settles asynchronously). */
  const ledgerRows = async (accountId: string, turns: number) => {
    await eventually(async () => (await harness.usageEntries(accountId, 20)).length >= turns, 15_000, 100);
    return harness.usageEntries(accountId, 20);
  };

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/agents-catalogue.yaml'), ...emulatedProviders(emulator.url) });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
    await Promise.all(scratch.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it.each([
    ['an OpenAI source taking the Responses API natively', 'acme/agent-native', 'agent-native', '/v1/responses'],
    ['an OpenAI-format source', 'acme/agent-mini', 'agent-mini', '/v1/chat/completions'],
    ['an Anthropic source', 'anthropic/agent-claude', 'agent-claude', '/v1/messages'],
  ])('Codex CLI (codex exec, Responses API) writes the file with its exec_command tool on %s (%s)', async (_source, catalogueId, upstreamModel, upstreamPath) => {
    const { key, accountId } = await harness.paidKey(20_000_000);
    const codexHome = await scratchDir('igw-codex-home-');
    const work = await scratchDir('igw-codex-work-');
    await writeFile(
      path.join(codexHome, 'config.toml'),
      [
        `model = "${catalogueId}"`,
        'model_provider = "gateway"',
        '',
        '[model_providers.gateway]',
        'name = "Inference gateway"',
        `base_url = "${harness.gateway}/v1"`,
        'env_key = "GATEWAY_API_KEY"',
        'wire_api = "responses"',
        '',
        '[analytics]',
        'enabled = false',
        '',
        '[features]',
        'plugins = false',
        '',
      ].join('\n'),
    );
    // Codex offers a shell as its `exec_command` function (a command line in `cmd`); the model's first turn uses it.
    const since = emulator.requests.length;
    emulator.script(upstreamModel, [{ toolCall: { name: 'exec_command', arguments: { cmd: `printf '%s\\n' '${TEXT}' > ${FILE}` } } }, { text: FINAL }]);

    const run = await runAgent(CODEX, ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', TASK], work, {
      HOME: codexHome,
      CODEX_HOME: codexHome,
      GATEWAY_API_KEY: key,
    });

    expect({ code: run.code, signal: run.signal, stderr: run.code === 0 ? '' : run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(await readFile(path.join(work, FILE), 'utf8')).toBe(`${TEXT}\n`);
    expect(run.stdout).toContain(FINAL);
    const turns = upstreamTurns(emulator, upstreamModel, since);
    expect(turns.map((turn) => turn.path)).toEqual([upstreamPath, upstreamPath]);
    // The second turn carried the command's result back to the model.
    expect(endingToolResult(turns[1])).toBeDefined();
    const rows = await ledgerRows(accountId, 2);
    expect(rows.map(({ model, endpoint }) => ({ model, endpoint }))).toEqual([
      { model: catalogueId, endpoint: 'responses' },
      { model: catalogueId, endpoint: 'responses' },
    ]);
    expect(rows.every((row) => Number(row.credits) > 0)).toBe(true);
  }, AGENT_TEST_MS);

  it.each([
    ['an Anthropic source', 'anthropic/agent-claude', 'ANTHROPIC_API_KEY (x-api-key)', 'agent-claude'],
    ['an OpenAI-format source', 'acme/agent-mini', 'ANTHROPIC_AUTH_TOKEN (a Bearer token)', 'agent-mini'],
  ])('Claude Code (claude -p, Messages API) writes the file with its Write tool on %s (%s), the key in %s', async (_source, catalogueId, keyVariable, upstreamModel) => {
    const { key, accountId } = await harness.paidKey(20_000_000);
    const home = await scratchDir('igw-claude-home-');
    const work = await scratchDir('igw-claude-work-');
    const since = emulator.requests.length;
    emulator.script(upstreamModel, [{ toolCall: { name: 'Write', arguments: { file_path: path.join(work, FILE), content: `${TEXT}\n` } } }, { text: FINAL }]);

    // As root Claude Code refuses --dangerously-skip-permissions; acceptEdits lets it write files in its working directory.
    const run = await runAgent(CLAUDE, ['-p', TASK, '--model', catalogueId, '--permission-mode', 'acceptEdits'], work, {
      HOME: home,
      ANTHROPIC_BASE_URL: harness.gateway,
      [keyVariable.split(' ')[0]]: key,
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      // The window of a model id Claude Code does not know (else it warns and assumes 1M tokens).
      CLAUDE_CODE_MAX_CONTEXT_TOKENS: '400000',
    });

    expect({ code: run.code, signal: run.signal, stderr: run.code === 0 ? '' : run.stderr + run.stdout }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(await readFile(path.join(work, FILE), 'utf8')).toBe(`${TEXT}\n`);
    expect(run.stdout).toContain(FINAL);
    expect(run.stderr).not.toContain('assumes a context window');
    const turns = upstreamTurns(emulator, upstreamModel, since);
    expect(turns).toHaveLength(2);
    expect(endingToolResult(turns[1])).toBeDefined();
    const rows = await ledgerRows(accountId, 2);
    expect(rows.map(({ model, endpoint }) => ({ model, endpoint }))).toEqual([
      { model: catalogueId, endpoint: 'messages' },
      { model: catalogueId, endpoint: 'messages' },
    ]);
    expect(rows.every((row) => Number(row.credits) > 0)).toBe(true);
  }, AGENT_TEST_MS);

  it.each([
    ['a Google source (natively)', 'google/agent-gemini', 'agent-gemini', '/v1beta/models/agent-gemini:streamGenerateContent?alt=sse'],
    ['an OpenAI-format source', 'acme/agent-mini', 'agent-mini', '/v1/chat/completions'],
  ])('the Gemini CLI (gemini -p, the Gemini API streamed) writes the file with its write_file tool on %s (%s)', async (_source, catalogueId, upstreamModel, upstreamPath) => {
    const { key, accountId } = await harness.paidKey(20_000_000);
    const home = await scratchDir('igw-gemini-home-');
    const work = await scratchDir('igw-gemini-work-');
    // No update checks, usage statistics or telemetry (each would reach Google), and the API key's auth chosen up front.
    await mkdir(path.join(home, '.gemini'));
    await writeFile(
      path.join(home, '.gemini/settings.json'),
      JSON.stringify({
        general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        security: { auth: { selectedType: 'gemini-api-key' } },
      }),
    );
    const since = emulator.requests.length;
    emulator.script(upstreamModel, [{ toolCall: { name: 'write_file', arguments: { file_path: path.join(work, FILE), content: `${TEXT}\n` } } }, { text: FINAL }]);

    const run = await runAgent(GEMINI, ['-m', catalogueId, '--approval-mode', 'yolo', '-p', TASK], work, {
      HOME: home,
      GOOGLE_GEMINI_BASE_URL: harness.gateway,
      GEMINI_API_KEY: key,
      // A headless run in a folder the CLI has not been told to trust exits 55.
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
    });

    expect({ code: run.code, signal: run.signal, stderr: run.code === 0 ? '' : run.stderr + run.stdout }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(await readFile(path.join(work, FILE), 'utf8')).toBe(`${TEXT}\n`);
    expect(run.stdout).toContain(FINAL);
    const turns = upstreamTurns(emulator, upstreamModel, since);
    expect(turns.map((turn) => turn.path)).toEqual([upstreamPath, upstreamPath]);
    expect(endingToolResult(turns[1])).toBeDefined();
    const rows = await ledgerRows(accountId, 2);
    expect(rows.map(({ model, endpoint }) => ({ model, endpoint }))).toEqual([
      { model: catalogueId, endpoint: GEMINI_ENDPOINT },
      { model: catalogueId, endpoint: GEMINI_ENDPOINT },
    ]);
    expect(rows.every((row) => Number(row.credits) > 0)).toBe(true);
  }, AGENT_TEST_MS);

  // The OpenAI-format translation is Codex's above: the SDK runs on the native and the Anthropic path.
  it.each([
    ['an OpenAI source taking the Responses API natively', 'acme/agent-native', 'a provider given the base URL and key', 'agent-native', '/v1/responses'],
    ['an Anthropic source', 'anthropic/agent-claude', 'OPENAI_BASE_URL and OPENAI_API_KEY', 'agent-claude', '/v1/messages'],
  ])('the OpenAI Agents SDK (its Responses model) runs a function tool with the arguments the model gave on %s (%s), set up with %s', async (_source, catalogueId, setup, upstreamModel, upstreamPath) => {
    const { key, accountId } = await harness.paidKey(20_000_000);
    const line = { invoice: 'INV-7', item: 'notebook', quantity: 3 };
    const answer = 'Three notebooks are on invoice INV-7.';
    const received: unknown[] = [];
    const addInvoiceLine = tool({
      name: 'add_invoice_line',
      description: 'Adds a line to an invoice',
      parameters: z.object({ invoice: z.string(), item: z.string(), quantity: z.number().int() }),
      execute: (input) => {
        received.push(input);
        return `Invoice ${input.invoice} now has ${input.quantity} x ${input.item}.`;
      },
    });
    const since = emulator.requests.length;
    emulator.script(upstreamModel, [{ toolCall: { name: 'add_invoice_line', arguments: line } }, { text: answer }]);

    const agent = new Agent({ name: 'Bookkeeper', instructions: 'You keep invoices.', model: catalogueId, tools: [addInvoiceLine] });
    const task = 'Add three notebooks to invoice INV-7.';
    let finalOutput: unknown;
    if (setup.startsWith('a provider')) {
      // No tracing: its exporter would post each run, with the key, to api.openai.com.
      const runner = new Runner({ modelProvider: new OpenAIProvider({ baseURL: `${harness.gateway}/v1`, apiKey: key, useResponses: true }), tracingDisabled: true });
      ({ finalOutput } = await runner.run(agent, task));
    } else {
      // The SDK's default client reads these when it is first made (this test is the only one to make it).
      const saved = { OPENAI_BASE_URL: process.env.OPENAI_BASE_URL, OPENAI_API_KEY: process.env.OPENAI_API_KEY, OPENAI_AGENTS_DISABLE_TRACING: process.env.OPENAI_AGENTS_DISABLE_TRACING };
      Object.assign(process.env, { OPENAI_BASE_URL: `${harness.gateway}/v1`, OPENAI_API_KEY: key, OPENAI_AGENTS_DISABLE_TRACING: '1' });
      try {
        ({ finalOutput } = await run(agent, task));
      } finally {
        for (const [name, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
    }

    expect(received).toEqual([line]);
    expect(finalOutput).toBe(answer);
    const turns = upstreamTurns(emulator, upstreamModel, since);
    expect(turns.map((turn) => turn.path)).toEqual([upstreamPath, upstreamPath]);
    expect(endingToolResult(turns[1])).toContain('Invoice INV-7 now has 3 x notebook.');
    const rows = await ledgerRows(accountId, 2);
    expect(rows.map(({ model, endpoint }) => ({ model, endpoint }))).toEqual([
      { model: catalogueId, endpoint: 'responses' },
      { model: catalogueId, endpoint: 'responses' },
    ]);
  }, AGENT_TEST_MS);
});
