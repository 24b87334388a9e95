import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ENGLISH_STOP_WORDS, englishTerm, stripPossessive } from './english.ts';

describe('english term filters', () => {
  it('has the 33 classic stop words', () => {
    assert.equal(ENGLISH_STOP_WORDS.size, 33);
    for (const word of ['the', 'a', 'with', 'into', 'such']) assert.ok(ENGLISH_STOP_WORDS.has(word));
    assert.ok(!ENGLISH_STOP_WORDS.has('he'));
  });

  it('strips only a trailing possessive', () => {
    assert.equal(stripPossessive("john's"), 'john');
    assert.equal(stripPossessive("'s"), "'s");
    assert.equal(stripPossessive("jon's's"), "jon's");
    assert.equal(stripPossessive('boss'), 'boss');
  });

  it('returns null for stop words, also behind a possessive, and stems the rest', () => {
    assert.equal(englishTerm('the'), null);
    assert.equal(englishTerm("it's"), null);
    assert.equal(englishTerm('caresses'), 'caress');
    assert.equal(englishTerm('generalizations'), 'gener');
    assert.equal(englishTerm('generalizations'), 'gener');
  });
});
