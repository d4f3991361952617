/**
 * Waits until `check` holds, looking every 20 ms; fails after `timeoutMs` with `what`. The limit is
 * generous on purpose: the CI machine is shared, and only the condition decides the outcome.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
