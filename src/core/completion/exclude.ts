import picomatch from 'picomatch';

/**
 * Which files a completion may read: the file being completed and the snippets of other files.
 * Only files of the open workspace (the host checks that), and none matched by `files.exclude`,
 * by `modelGateway.completions.exclude`, or by the secrets list: environment files, keys and
 * certificates, credential files, the folders named for secrets. The secrets list follows
 * Continue's security ignore list (continuedev/continue core/indexing/ignore.ts). Patterns are
 * globs relative to the workspace folder, as `files.exclude` writes them; a pattern that matches a
 * folder excludes everything below it.
 */
export const SECRET_PATTERNS: readonly string[] = [
  '**/.env',
  '**/.env.*',
  '**/*.env',
  '**/*.pem',
  '**/*.key',
  '**/*.p12',
  '**/*.pfx',
  '**/*.keystore',
  '**/*.jks',
  '**/id_*',
  '**/credentials',
  '**/credentials.*',
  '**/*credentials*.json',
  '**/.netrc',
  '**/.git-credentials',
  '**/.npmrc',
  '**/.pypirc',
  '**/*.secret',
  '**/*.secrets',
  '**/secrets/**',
  '**/.secrets/**',
  '**/.ssh/**',
  '**/.aws/**',
];

export interface ExcludeSettings {
  /** VS Code's `files.exclude` of the file's folder: glob → true (or a `when` clause). */
  filesExclude: Record<string, unknown>;
  /** `modelGateway.completions.exclude`. */
  patterns: readonly string[];
}

/** A test of a workspace-relative path (with `/`). */
export type ExcludeRule = (relativePath: string) => boolean;

export function excludeRule(settings: ExcludeSettings): ExcludeRule {
  // An entry with a `when` clause excludes a file only next to a sibling; it is taken as excluding
  // always, so nothing it may hide is ever sent.
  const fromFiles = Object.entries(settings.filesExclude)
    .filter(([, on]) => on === true || (typeof on === 'object' && on !== null))
    .map(([glob]) => glob);
  const globs = [...SECRET_PATTERNS, ...fromFiles, ...settings.patterns].filter((g) => g.trim());
  const match = picomatch(globs, { dot: true, nocase: true });
  return (relativePath) => {
    const parts = relativePath.split('/').filter(Boolean);
    // The file itself or any folder on its way.
    for (let n = parts.length; n >= 1; n--) if (match(parts.slice(0, n).join('/'))) return true;
    return false;
  };
}
