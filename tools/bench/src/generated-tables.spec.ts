import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { benchCommand, checkoutCommit, generatedTablePath, generatedTablesText, writeGeneratedTables } from './generated-tables';

describe('generatedTablePath', () => {
  it('names the file after the run, skipping the parts a run does not have', () => {
    expect(generatedTablePath('/repo', ['bench', undefined, 'redis'])).toBe('/repo/docs/performance/bench-redis.md');
    expect(generatedTablePath('/repo', ['compare', '', '-DIRECT_ROUTES-false'])).toBe('/repo/docs/performance/compare-direct-routes-false.md');
  });
});

describe('benchCommand', () => {
  it('repeats the run: its BENCH_* settings and DIRECT_ROUTES sorted, servers named but not spelled out, the arguments after --', () => {
    const env = { BENCH_ROUNDS: '4', BENCH_ONLY: 'chat', BENCH_WRITE_DOCS: '1', DIRECT_ROUTES: 'false', REDIS_URL: 'redis://user:secret@host:6379', HOME: '/root' };
    expect(benchCommand('bench:compare', ['DIRECT_ROUTES=false:.'], env)).toBe('REDIS_URL=… BENCH_ONLY=chat BENCH_ROUNDS=4 DIRECT_ROUTES=false npm run bench:compare -- DIRECT_ROUTES=false:.');
    expect(benchCommand('bench', [], {})).toBe('npm run bench');
  });
});

describe('generatedTablesText', () => {
  it('heads the tables with the command, the commits, the date, the machine and its load', () => {
    const text = generatedTablesText(
      { title: 'npm run bench', command: 'npm run bench', commits: 'abc1234', machine: '2 × CPU; queue: PostgreSQL', tables: '| a |\n|---|\n| 1 |\n\n' },
      new Date('2026-01-02T03:04:05.000Z'),
      0.25,
    );
    expect(text.split('\n').slice(1)).toEqual([
      '# npm run bench',
      '',
      '* command: `npm run bench`',
      '* commit: abc1234',
      '* date: 2026-01-02T03:04:05.000Z',
      '* machine: 2 × CPU; queue: PostgreSQL; load average when the run started: 0.25 (an idle machine reads about 0)',
      '',
      '| a |',
      '|---|',
      '| 1 |',
      '',
    ]);
  });
});

describe('checkoutCommit', () => {
  let root: string;
  const git = (...args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'generated-tables-'));
    git('init', '-q');
    mkdirSync(path.join(root, 'docs'));
    writeFileSync(path.join(root, 'code.ts'), 'one');
    writeFileSync(path.join(root, 'docs/notes.md'), 'one');
    git('add', '.');
    git('-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-qm', 'first');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is the short commit of a clean checkout, and of one whose docs alone changed', () => {
    const commit = git('rev-parse', '--short', 'HEAD');
    expect(checkoutCommit(root)).toBe(commit);
    writeFileSync(path.join(root, 'docs/notes.md'), 'two');
    expect(checkoutCommit(root)).toBe(commit);
  });

  it('is marked when tracked code differs from the commit', () => {
    writeFileSync(path.join(root, 'code.ts'), 'two');
    expect(checkoutCommit(root)).toBe(`${git('rev-parse', '--short', 'HEAD')}+changes`);
  });

  it('says so outside a git checkout', () => {
    expect(checkoutCommit(tmpdir())).toBe('unknown (not a git checkout)');
  });
});

describe('writeGeneratedTables', () => {
  const content = { title: 't', command: 'npm run bench', commits: 'abc1234', machine: 'm', tables: '| a |' };
  let folder: string;
  beforeEach(() => (folder = mkdtempSync(path.join(tmpdir(), 'generated-tables-'))));
  afterEach(() => {
    delete process.env.BENCH_WRITE_DOCS;
    rmSync(folder, { recursive: true, force: true });
  });

  it('writes nothing unless BENCH_WRITE_DOCS=1', async () => {
    const file = path.join(folder, 'docs/performance/bench.md');
    expect(await writeGeneratedTables(file, content)).toBeUndefined();
    expect(existsSync(file)).toBe(false);
  });

  it('with BENCH_WRITE_DOCS=1, writes the file and its folder', async () => {
    process.env.BENCH_WRITE_DOCS = '1';
    const file = path.join(folder, 'docs/performance/bench.md');
    expect(await writeGeneratedTables(file, content)).toBe(file);
    expect(readFileSync(file, 'utf8')).toContain('* commit: abc1234');
  });
});
