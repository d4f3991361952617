/**
 * The one workbench every `*.e2e.ts` file drives. run.ts fills it in before mocha loads the files;
 * the files read it inside hooks and tests (not at load time), so they can be loaded in any order.
 */
import type { Page } from 'playwright-core';
import type { GatewayDouble } from '../gateway';
import type { CodeServer } from '../vscode/codeServer';
import type { LocalisedWorkbench } from './environment';

export interface UiContext {
  page: Page;
  double: GatewayDouble;
  codeServer: CodeServer;
  /** The folder the workbench has open. */
  workspace: string;
  /** A second (third, ...) window on the same workspace and profile; see E2eEnvironment.openWindow. */
  openWindow(): Promise<Page>;
  /** A separate workbench in another display language; see E2eEnvironment.openInLanguage. */
  openInLanguage(locale: string): Promise<LocalisedWorkbench>;
}

let current: UiContext | undefined;

export function setUiContext(context: UiContext | undefined): void {
  current = context;
}

export function ui(): UiContext {
  if (!current) {
    throw new Error(
      'The UI tests need a running workbench: run them with `npx tsx test/e2e/run.ts`, not with mocha directly.',
    );
  }
  return current;
}
