// madge ships no types; this declares the part of its API the cycle check calls (its README's "API").
declare module 'madge' {
  interface MadgeResult {
    /** Each cycle as the files in it, relative to the base directory. */
    circular(): string[][];
    /** Files madge found imported but could not resolve. */
    warnings(): { skipped: string[] };
  }
  interface MadgeConfig {
    baseDir?: string;
    fileExtensions?: string[];
    tsConfig?: string;
    detectiveOptions?: Record<string, Record<string, unknown>>;
  }
  function madge(path: string | string[], config?: MadgeConfig): Promise<MadgeResult>;
  export = madge;
}
