import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EngineError } from '../errors.ts';
import type { AnalyzerName } from '../mapping/mapping.ts';
import { MAX_TOKEN_LENGTH, analyze, analyzeTermPositions, analyzeTerms, normalizeTerm, receiveTerms } from './analyzer.ts';

/** Each token as `term@position[start,end)`, compact enough to compare whole lists. */
function describeTokens(analyzer: AnalyzerName, text: string): string[] {
  return analyze(analyzer, text).map(
    (token) => `${token.term}@${token.position}[${token.startOffset},${token.endOffset})`,
  );
}

describe('standard analyzer', () => {
  it('splits on word boundaries and lowercases, with offsets into the original text', () => {
    assert.deepEqual(describeTokens('standard', 'Hello, World!  Foo-bar'), [
      'hello@0[0,5)',
      'world@1[7,12)',
      'foo@2[15,18)',
      'bar@3[19,22)',
    ]);
    assert.deepEqual(analyzeTerms('standard', ''), []);
    assert.deepEqual(analyzeTerms('standard', ' \n\t!? -- '), []);
  });

  it('folds diacritics and special letters to ASCII', () => {
    assert.deepEqual(analyzeTerms('standard', 'Crème Brûlée à Łódź, Straße, Ærøskøbing, Þór, Œuvre'), [
      'creme',
      'brulee',
      'a',
      'lodz',
      'strasse',
      'aeroskobing',
      'thor',
      'oeuvre',
    ]);
    assert.deepEqual(analyzeTerms('standard', 'ﬁne ＦＵＬＬ Ёлка ΟΔΟΣ'), ['fine', 'full', 'елка', 'οδοσ']);
  });

  it('keeps combining marks with their word and offsets on the original string', () => {
    const decomposed = 'e\u0301cole Cafe\u0301';
    assert.deepEqual(describeTokens('standard', decomposed), ['ecole@0[0,6)', 'cafe@1[7,12)']);
    assert.deepEqual(describeTokens('standard', 'İstanbul ABC'), ['istanbul@0[0,8)', 'abc@1[9,12)']);
    assert.deepEqual(describeTokens('standard', 'Café AU lait'), ['cafe@0[0,4)', 'au@1[5,7)', 'lait@2[8,12)']);
  });

  it('keeps apostrophes between letters and separators between digits', () => {
    assert.deepEqual(analyzeTerms('standard', "Don't o’Neil rock'n'roll 'quoted' 90's it''s"), [
      "don't",
      "o'neil",
      "rock'n'roll",
      'quoted',
      '90',
      's',
      'it',
      's',
    ]);
    assert.deepEqual(analyzeTerms('standard', '3.14 1,000,000 v1.2.3 1. .5 a.b x,1 2,y'), [
      '3.14',
      '1,000,000',
      'v1.2.3',
      '1',
      '5',
      'a',
      'b',
      'x',
      '1',
      '2',
      'y',
    ]);
  });

  it('joins connector punctuation but drops runs of it alone', () => {
    assert.deepEqual(analyzeTerms('standard', 'snake_case __init__ ___ _'), ['snake_case', '__init__']);
  });

  it('makes each ideograph a token and keeps other scripts as words', () => {
    assert.deepEqual(describeTokens('standard', '東京タワーへ行く'), [
      '東@0[0,1)',
      '京@1[1,2)',
      'タワー@2[2,5)',
      'へ@3[5,6)',
      '行@4[6,7)',
      'く@5[7,8)',
    ]);
    assert.deepEqual(analyzeTerms('standard', 'abc中文def'), ['abc', '中', '文', 'def']);
    assert.deepEqual(analyzeTerms('standard', '𠀀x'), ['𠀀', 'x']);
  });

  it('handles characters outside the BMP and lone surrogates', () => {
    assert.deepEqual(describeTokens('standard', 'hi😀there 𝐀𝐁𝐂'), ['hi@0[0,2)', 'there@1[4,9)', 'abc@2[10,16)']);
    assert.deepEqual(analyzeTerms('standard', 'a\ud800b \udc00c'), ['a', 'b', 'c']);
  });

  it('drops tokens longer than the limit but still advances the position', () => {
    const long = 'x'.repeat(MAX_TOKEN_LENGTH + 1);
    const kept = 'y'.repeat(MAX_TOKEN_LENGTH);
    const tokens = analyze('standard', `one ${long} two ${kept}`);
    assert.deepEqual(
      tokens.map((token) => [token.term.length, token.position]),
      [
        [3, 0],
        [3, 2],
        [MAX_TOKEN_LENGTH, 3],
      ],
    );
  });

  it('returns the same terms and positions from every entry point', () => {
    const text = 'The Quick brown fox’s DEN — naïve café, 2,5 km.';
    for (const analyzer of ['standard', 'english', 'whitespace', 'keyword'] as const) {
      const tokens = analyze(analyzer, text);
      const { terms, positions } = analyzeTermPositions(analyzer, text);
      assert.deepEqual(
        terms,
        tokens.map((token) => token.term),
      );
      assert.deepEqual(
        positions,
        tokens.map((token) => token.position),
      );
      assert.deepEqual(analyzeTerms(analyzer, text), terms);
    }
  });
});

describe('english analyzer', () => {
  it('removes stop words leaving position gaps, strips possessives and stems', () => {
    assert.deepEqual(describeTokens('english', "The dogs' owner's running in the parks"), [
      'dog@1[4,8)',
      'owner@2[10,17)',
      'run@3[18,25)',
      'park@6[33,38)',
    ]);
    assert.deepEqual(analyzeTerms('english', "It's John’s HAPPINESS, isn't it?"), ['john', 'happi', "isn't"]);
  });

  it('folds before stemming', () => {
    assert.deepEqual(analyzeTerms('english', 'Cafés relational ponies'), ['cafe', 'relat', 'poni']);
  });
});

describe('whitespace and keyword analyzers', () => {
  it('whitespace splits on whitespace only and keeps case and punctuation', () => {
    assert.deepEqual(describeTokens('whitespace', ' Hello,  World!\tFoo\u00a0Bar\u3000Ünï '), [
      'Hello,@0[1,7)',
      'World!@1[9,15)',
      'Foo\u00a0Bar@2[16,23)',
      'Ünï@3[24,27)',
    ]);
  });

  it('keyword keeps the whole string as one token', () => {
    assert.deepEqual(describeTokens('keyword', ' Mixed Case, punctuation! '), [' Mixed Case, punctuation! @0[0,26)']);
    assert.deepEqual(analyzeTerms('keyword', ''), ['']);
  });
});

describe('normalizeTerm', () => {
  it('lowercases and folds for word analyzers without splitting or stemming', () => {
    assert.equal(normalizeTerm('standard', 'Crème Brûlée'), 'creme brulee');
    assert.equal(normalizeTerm('english', 'Running'), 'running');
    assert.equal(normalizeTerm('standard', 'ABC-12'), 'abc-12');
  });

  it('leaves whitespace and keyword terms unchanged', () => {
    assert.equal(normalizeTerm('whitespace', 'Crème'), 'Crème');
    assert.equal(normalizeTerm('keyword', 'Crème Brûlée'), 'Crème Brûlée');
  });

  it('rejects an unknown analyzer', () => {
    assert.throws(
      () => analyze('french' as AnalyzerName, 'bonjour'),
      (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument',
    );
    assert.throws(() => normalizeTerm('french' as AnalyzerName, 'x'), { code: 'illegal_argument' });
  });
});

describe('receiveTerms (the indexing path)', () => {
  /** The terms and positions a receiver gets, spans sliced. */
  function received(analyzer: AnalyzerName, text: string): { terms: string[]; positions: number[]; spans: number } {
    const terms: string[] = [];
    const positions: number[] = [];
    let spans = 0;
    receiveTerms(analyzer, text, {
      span(source, start, end, position) {
        terms.push(source.slice(start, end));
        positions.push(position);
        spans++;
      },
      term(term, position) {
        terms.push(term);
        positions.push(position);
      },
    });
    return { terms, positions, spans };
  }

  const texts = [
    'Hello, World!  Foo-bar',
    "Don't STOP the 3.14 and 1,000 o'neil_x __ snake_case",
    'Café Ørsted ÆTHER straße İstanbul DİYARBAKIR',
    'İ alone, then ASCII words After İt',
    'Emoji 😀 and 漢字かな mixed with ﬁ ligature',
    `${'a'.repeat(MAX_TOKEN_LENGTH + 1)} kept ${'b'.repeat(MAX_TOKEN_LENGTH)} end`,
    '  tabs\tand\nnew lines\u00a0nbsp  ',
    'The quick brown foxes were running to their houses',
    '',
  ];

  it('gives every analyzer the terms and positions of analyzeTermPositions', () => {
    for (const analyzer of ['standard', 'english', 'whitespace', 'keyword'] as const) {
      for (const text of texts) {
        const { terms, positions } = received(analyzer, text);
        assert.deepEqual({ terms, positions }, analyzeTermPositions(analyzer, text), `${analyzer}: ${text}`);
      }
    }
  });

  it('passes ASCII words of the standard analyzer as spans, without slicing them', () => {
    const { spans, terms } = received('standard', 'Plain ASCII text, Café');
    assert.deepEqual(terms, ['plain', 'ascii', 'text', 'cafe']);
    assert.equal(spans, 3);
  });

  it('rejects an unknown analyzer', () => {
    assert.throws(() => received('nope' as AnalyzerName, 'x'), EngineError);
  });
});
