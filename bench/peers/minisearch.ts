/**
 * Engine-suite worker for MiniSearch: an in-memory index of `subject` and `body`. Its "disk" is
 * the JSON serialisation, and reopening means parsing that JSON back. MiniSearch has no phrase
 * queries, so that class is reported as n/a.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import MiniSearch, { type Options } from 'minisearch';
import type { QueryClass } from '../query-set.ts';
import { runWorker, type CorpusDocument, type PeerEngine, type WorkerRequest } from './harness.ts';

/** The indexed shape of an e-mail. */
interface IndexedEmail {
  id: string;
  subject: string;
  body: string;
}

/**
 * MiniSearch's default tokenizer splits on spaces and punctuation only, so `<br>word` or
 * `a=3Dword` stay one token; splitting on every non-alphanumeric character, as FTS5's
 * `unicode61` does, makes all peers index and find the same words.
 */
const WORD_SEPARATORS = /[^\p{L}\p{N}]+/u;

const OPTIONS: Options<IndexedEmail> = {
  idField: 'id',
  fields: ['subject', 'body'],
  storeFields: [],
  tokenize: (text) => text.split(WORD_SEPARATORS),
};

/** A MiniSearch index plus the file its serialisation goes to. */
class MiniSearchEngine implements PeerEngine {
  readonly layer = 'in memory (loaded back from its JSON serialisation)';
  private miniSearch = new MiniSearch<IndexedEmail>(OPTIONS);

  constructor(private readonly file: string) {}

  index(documents: CorpusDocument[]): void {
    this.miniSearch.addAll(
      documents.map(({ id, source }) => ({ id, subject: String(source.subject), body: String(source.body) })),
    );
  }

  finishIndexing(): void {}

  async diskBytes(): Promise<number> {
    await fs.writeFile(this.file, JSON.stringify(this.miniSearch));
    return (await fs.stat(this.file)).size;
  }

  async reopen(): Promise<void> {
    // Drop the loaded index first, so that two copies never sit in memory together.
    this.miniSearch = new MiniSearch<IndexedEmail>(OPTIONS);
    this.miniSearch = MiniSearch.loadJSON<IndexedEmail>(await fs.readFile(this.file, 'utf8'), OPTIONS);
  }

  supports(queryClass: QueryClass): boolean {
    return queryClass !== 'phrase';
  }

  search(queryClass: QueryClass, terms: readonly string[]): number {
    const combineWith = queryClass === 'or' ? 'OR' : 'AND';
    return this.miniSearch.search(terms.join(' '), { fields: ['body'], combineWith, prefix: false, fuzzy: false }).slice(0, 10)
      .length;
  }

  async close(): Promise<void> {}
}

await runWorker('minisearch', async (request: WorkerRequest) => new MiniSearchEngine(path.join(request.dataDir, 'index.json')));
