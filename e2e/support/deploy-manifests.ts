import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { parse, parseAllDocuments } from 'yaml';

export const ROOT = path.resolve(__dirname, '../..');
export const CHART_DIR = path.join(ROOT, 'deploy/helm/inference-gateway');

/** A rendered Kubernetes object, loosely typed: tests read what they assert. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; annotations?: Record<string, string> }; [field: string]: any };

/** helm from HELM_PATH or PATH (.ci/install-helm puts it in /usr/local/bin). */
export function findHelm(): string | undefined {
  const candidate = process.env.HELM_PATH || 'helm';
  const probe = spawnSync(candidate, ['version', '--short'], { encoding: 'utf8' });
  return probe.status === 0 ? candidate : undefined;
}

/** `helm template` of the chart with the given values files, --set-json values and --set-file pairs, as objects. */
export function renderChart(helm: string, options: { valuesFiles?: string[]; set?: Record<string, unknown>; setFiles?: Record<string, string> } = {}): Manifest[] {
  const args = ['template', 'igw', CHART_DIR, '--namespace', 'igw'];
  for (const file of options.valuesFiles ?? []) args.push('--values', file);
  for (const [key, value] of Object.entries(options.set ?? {})) args.push('--set-json', `${key}=${JSON.stringify(value)}`);
  for (const [key, file] of Object.entries(options.setFiles ?? {})) args.push('--set-file', `${key}=${file}`);
  const output = execFileSync(helm, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseAllDocuments(output)
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`helm rendered invalid YAML: ${document.errors[0].message}`);
      return document.toJS() as Manifest | null;
    })
    .filter((manifest): manifest is Manifest => manifest !== null);
}

interface KubernetesModel {
  validate(): void;
}

/**
 * Schema errors of one object against the Kubernetes OpenAPI schemas (kubernetes-models:
 * required fields, types, enums, formats), as messages; empty when it is valid.
 */
export function schemaErrors(manifest: Manifest): string[] {
  let Model: new (data: unknown) => KubernetesModel;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    Model = (require(`kubernetes-models/${manifest.apiVersion}/${manifest.kind}`) as Record<string, new (data: unknown) => KubernetesModel>)[manifest.kind];
  } catch {
    return [`${manifest.kind} ${manifest.metadata.name}: no schema for ${manifest.apiVersion} ${manifest.kind}`];
  }
  try {
    new Model(manifest).validate();
    return [];
  } catch (error) {
    return [`${manifest.kind} ${manifest.metadata.name}: ${error instanceof Error ? error.message : String(error)}`];
  }
}

/**
 * Fields the Kubernetes API does not know (a misspelt `readinesProbe` would be dropped by the
 * API server, or refused under strict field validation): every object is type-checked as an
 * object literal against kubernetes-models' declarations, whose excess property checks name
 * any field the API types lack, at any depth.
 */
export function unknownFieldErrors(manifests: Manifest[]): string[] {
  const fileName = path.join(ROOT, '__rendered_manifests__.ts');
  const source = manifests
    .map((manifest, index) => {
      const module = `kubernetes-models/${manifest.apiVersion}/${manifest.kind}`;
      return `import type { I${manifest.kind} as Type${index} } from '${module}';\nexport const manifest${index}: Type${index} = ${JSON.stringify(manifest, null, 1)};`;
    })
    .join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) => (name === fileName ? ts.createSourceFile(name, source, language) : getSourceFile.call(host, name, language, ...rest));
  host.fileExists = (name) => name === fileName || fileExists.call(host, name);
  host.readFile = (name) => (name === fileName ? source : readFile.call(host, name));
  const program = ts.createProgram([fileName], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file?.fileName === fileName)
    .map((diagnostic) => {
      const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const owner = source.slice(0, diagnostic.start).lastIndexOf('export const manifest');
      const index = Number(/manifest(\d+)/.exec(source.slice(owner))?.[1]);
      return `${manifests[index]?.kind} ${manifests[index]?.metadata.name} (line ${line + 1}): ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
    });
}

/** docker-compose.yml as Compose reads it: YAML merge keys applied, nothing interpolated yet. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function loadCompose(): any {
  return parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
}

/**
 * Compose's interpolation of one value with the given host environment: `${VAR}`,
 * `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}` (throws when unset or empty) and `$$`.
 */
export function interpolate(value: string, environment: Record<string, string | undefined>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g, (match, name: string | undefined, operator: string | undefined, argument: string | undefined) => {
    if (match === '$$') return '$';
    const current = environment[name!];
    const unset = operator?.startsWith(':') ? !current : current === undefined;
    if (operator?.endsWith('?') && unset) throw new Error(`${name}: ${argument}`);
    if (operator?.endsWith('-') && unset) return argument ?? '';
    return current ?? '';
  });
}
