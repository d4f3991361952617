/** Narrowing helpers for request bodies, which arrive as `unknown`. */

export { isRecord } from '../../src/shared/isRecord';

export function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
