import { openFile, type OpenedFile } from '../../src/core/tools/openedFile';

/** Runs `use` on `file` opened as the document tools open a file the user named, and closes it. */
export async function withOpened<T>(file: string, use: (opened: OpenedFile) => Promise<T>): Promise<T> {
  const opened = await openFile(file);
  try {
    return await use(opened);
  } finally {
    await opened.close();
  }
}
