/**
 * Engine-suite worker for SQLite FTS5 (better-sqlite3): one FTS5 table, WAL journal,
 * `synchronous=NORMAL`, one transaction per batch, top-10 by `bm25()`.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import type { QueryClass } from '../query-set.ts';
import { directoryBytes, runWorker, type CorpusDocument, type PeerEngine, type WorkerRequest } from './harness.ts';

const TABLE_SQL =
  'CREATE VIRTUAL TABLE emails USING fts5(subject, body, sender UNINDEXED, recipient UNINDEXED, date UNINDEXED, doc_id UNINDEXED)';
const INSERT_SQL = 'INSERT INTO emails(subject, body, sender, recipient, date, doc_id) VALUES (?, ?, ?, ?, ?, ?)';
const SEARCH_SQL = 'SELECT rowid FROM emails WHERE emails MATCH ? ORDER BY bm25(emails) LIMIT 10';

/** The FTS5 expression of a query, restricted to the `body` column like the other peers. */
export function fts5Expression(queryClass: QueryClass, terms: readonly string[]): string {
  const quoted = terms.map((term) => `"${term.replaceAll('"', '""')}"`);
  switch (queryClass) {
    case 'common':
    case 'rare':
      return `body : ${quoted[0]}`;
    case 'and':
      return `body : (${quoted.join(' AND ')})`;
    case 'or':
      return `body : (${quoted.join(' OR ')})`;
    case 'phrase':
      return `body : "${terms.join(' ')}"`;
  }
}

/** An open FTS5 database with its prepared statements. */
class Fts5Engine implements PeerEngine {
  readonly layer = "after INSERT INTO emails(emails) VALUES('optimize') and a WAL checkpoint";
  private database: Database.Database;
  private searchStatement: Database.Statement<[string], { rowid: number }>;
  private readonly insertBatch: (documents: CorpusDocument[]) => void;

  constructor(private readonly file: string) {
    this.database = Fts5Engine.openDatabase(file);
    this.database.exec(TABLE_SQL);
    const insert = this.database.prepare(INSERT_SQL);
    this.insertBatch = this.database.transaction((documents: CorpusDocument[]) => {
      for (const { id, source } of documents) {
        insert.run(source.subject, source.body, source.from, source.to, source.date, id);
      }
    });
    this.searchStatement = this.database.prepare(SEARCH_SQL);
  }

  private static openDatabase(file: string): Database.Database {
    const database = new Database(file);
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    return database;
  }

  index(documents: CorpusDocument[]): void {
    this.insertBatch(documents);
  }

  finishIndexing(): void {}

  optimize(): void {
    this.database.exec("INSERT INTO emails(emails) VALUES('optimize')");
    this.database.pragma('wal_checkpoint(TRUNCATE)');
  }

  diskBytes(): Promise<number> {
    return directoryBytes(path.dirname(this.file));
  }

  async reopen(): Promise<void> {
    this.database.close();
    this.database = Fts5Engine.openDatabase(this.file);
    this.searchStatement = this.database.prepare(SEARCH_SQL);
  }

  supports(): boolean {
    return true;
  }

  search(queryClass: QueryClass, terms: readonly string[]): number {
    return this.searchStatement.all(fts5Expression(queryClass, terms)).length;
  }

  async close(): Promise<void> {
    this.database.close();
  }
}

await runWorker('fts5', async (request: WorkerRequest) => new Fts5Engine(path.join(request.dataDir, 'emails.db')));
