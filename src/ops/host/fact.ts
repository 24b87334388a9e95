/**
 * A host fact is its value, or `null` with the reason it could not be read: containers and
 * minimal kernels hide many files, and a missing fact must never fail the node info endpoint.
 */

/** One fact: `{value}` when read, `{value: null, error}` when not. */
export type Fact<T> = { value: T } | { value: null; error: string };

/** Runs a reader and captures its value or its failure as a fact. */
export async function fact<T>(read: () => Promise<T>): Promise<Fact<T>> {
  try {
    return { value: await read() };
  } catch (error) {
    return { value: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The value of a fact, or null. */
export function valueOf<T>(item: Fact<T> | undefined): T | null {
  return item === undefined ? null : item.value;
}
