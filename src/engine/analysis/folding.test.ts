import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { foldNonAsciiWord, foldText, isAscii, ownedString } from './folding.ts';

describe('folding', () => {
  it('folds accents, compatibility forms and special letters, and lowercases', () => {
    assert.equal(foldNonAsciiWord('ÀÉÎÕÜ'), 'aeiou');
    assert.equal(foldNonAsciiWord('ẞtraße'), 'sstrasse');
    assert.equal(foldNonAsciiWord('Đorđe'), 'dorde');
    assert.equal(foldNonAsciiWord('ǅemal'), 'dzemal');
    assert.equal(foldNonAsciiWord('soft\u00adhyphen'), 'softhyphen');
    assert.equal(foldNonAsciiWord('ガギグ'), 'ガギグ', 'kana voicing marks are not diacritics to strip');
    assert.equal(foldNonAsciiWord('한국어'), '한국어', 'Hangul syllables recompose');
    assert.equal(foldNonAsciiWord('हिन्दी'), 'हिन्दी', 'Indic vowel signs are kept');
  });

  it('lowercases ASCII text without other changes', () => {
    assert.equal(foldText('Hello-World 42'), 'hello-world 42');
    assert.equal(foldText('Hello Wörld'), 'hello world');
    assert.ok(isAscii('plain text'));
    assert.ok(!isAscii('naïve'));
  });

  it('copies strings without changing them', () => {
    const long = 'a-rather-long-document-text'.repeat(3);
    assert.equal(ownedString(long.slice(2, 30)), long.slice(2, 30));
    assert.equal(ownedString('short'), 'short');
  });
});
