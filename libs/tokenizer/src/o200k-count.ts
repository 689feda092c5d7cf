import { countTokens as countWithGptTokenizer } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * Special-token names in a client's text (`<|endoftext|>`) are counted as the plain text they
 * are: an upstream never reads them as control tokens from a message either.
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * The o200k_base token count of a text, exactly as gpt-tokenizer gives it, about twice as fast
 * for text in the Latin alphabet without accents (English, code, JSON), with punctuation and
 * symbols of any script. gpt-tokenizer spends
 * most of a count splitting the text with o200k's pre-tokenizing regular expression and looking
 * each piece up in its 200,000-entry vocabulary by a fresh substring. Here such stretches are
 * split by a hand-written scanner that decides what that expression decides (each branch names
 * the alternative it follows), and each piece's count is looked up in a small table by its
 * characters in place; a piece the table lacks is counted by gpt-tokenizer. A stretch holding
 * any other letter, digit or space (é, 日, ٣, a non-breaking space), or a character outside the
 * Basic Multilingual Plane, is counted by gpt-tokenizer whole. o200k-count.spec.ts compares the
 * two on random and real text.
 */
export function countO200kTokens(text: string): number {
  let total = 0;
  let stretch = SCANNED_STRETCH;
  for (let start = 0; start < text.length; ) {
    const end = nextCut(text, start + stretch);
    const scanned = stretch === SCANNED_STRETCH ? countStretch(text, start, end) : -1;
    if (scanned >= 0) {
      total += scanned;
    } else {
      total += countWithGptTokenizer(start === 0 && end === text.length ? text : text.slice(start, end), PLAIN_TEXT);
      // Text in another script: try the scanner again only now and then.
      stretch = stretch === SCANNED_STRETCH ? LEFT_STRETCH : SCANNED_STRETCH;
    }
    start = end;
  }
  return total;
}

/** Text scanned at a time: a stretch with one character the scanner leaves alone is counted by gpt-tokenizer. */
const SCANNED_STRETCH = 1_024;
/** Text counted by gpt-tokenizer after a stretch the scanner left to it, before scanning again. */
const LEFT_STRETCH = 16_384;

/**
 * The first index at or after `from` where the text can be cut without changing its count: a
 * space right after a character that is not whitespace. No o200k pre-token runs on from a
 * non-whitespace character into a space, and none reaches back across it, so the pieces are
 * the same either side (and a run longer than countTokens counts whole lies wholly on one side).
 */
export function nextCut(text: string, from: number): number {
  for (let index = text.indexOf(' ', Math.max(from, 1)); index !== -1; index = text.indexOf(' ', index + 1)) {
    if (!isWhitespace(text.charCodeAt(index - 1))) return index;
  }
  return text.length;
}

/** A regular expression's `\s`. */
export function isWhitespace(code: number): boolean {
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return (
    code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
  );
}

// Character classes of o200k's pre-tokenizer (END: past the stretch).
const OTHER = 0; // neither letter, digit nor whitespace
const UPPER = 1;
const LOWER = 2;
const DIGIT = 3;
const SPACE = 4; // whitespace other than a line break
const NEWLINE = 5; // \r \n
const LEFT_ALONE = 6; // counted by gpt-tokenizer: other letters, digits, marks and spaces, surrogates
const END = 7;
const UNSEEN = 8;

/** Each UTF-16 code unit's class; those above ASCII are looked up when first met. */
const CLASS_OF = new Uint8Array(0x10000).fill(UNSEEN);
for (let code = 0; code < 0x80; code++) {
  CLASS_OF[code] =
    code >= 0x41 && code <= 0x5a ? UPPER
    : code >= 0x61 && code <= 0x7a ? LOWER
    : code >= 0x30 && code <= 0x39 ? DIGIT
    : code === 0x0a || code === 0x0d ? NEWLINE
    : isWhitespace(code) ? SPACE
    : OTHER;
}

/**
 * The class of a character above ASCII: OTHER for punctuation and symbols (’ “ — … •), which
 * the pattern treats exactly as ASCII punctuation; anything the pattern tells apart otherwise is
 * left to gpt-tokenizer.
 */
function classOfUnseen(code: number): number {
  const kind = (code >= 0xd800 && code <= 0xdfff) || LETTER_DIGIT_MARK_OR_SPACE.test(String.fromCharCode(code)) ? LEFT_ALONE : OTHER;
  CLASS_OF[code] = kind;
  return kind;
}
const LETTER_DIGIT_MARK_OR_SPACE = /[\p{L}\p{N}\p{M}\s]/u;

const APOSTROPHE = 0x27;
const SPACE_CHAR = 0x20;
const SLASH = 0x2f;

/** The class of text[index], END past `end`. */
function classAt(text: string, index: number, end: number): number {
  if (index >= end) return END;
  const code = text.charCodeAt(index);
  const kind = CLASS_OF[code];
  return kind === UNSEEN ? classOfUnseen(code) : kind;
}

/** Whether a UTF-16 code unit is an ASCII capital (the only characters the scanner classes UPPER), and a small letter (LOWER). */
const isCapital = (code: number) => code - 0x41 >>> 0 < 26;
const isSmall = (code: number) => code - 0x61 >>> 0 < 26;

/**
 * The tokens of text[start, end), or -1 when it holds a character left to gpt-tokenizer.
 * Follows o200k's pattern
 *   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 *   | [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 *   | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
 * with `end` as the end of the text. Each piece's key is gathered as it is scanned (words, most
 * of the text, in the letter loops themselves), for its look-up in the table of counts.
 */
function countStretch(text: string, start: number, end: number): number {
  let total = 0;
  for (let index = start; index < end; ) {
    const kind = classAt(text, index, end);
    if (kind === LEFT_ALONE) return -1;
    const next = classAt(text, index + 1, end);
    // The piece's last eight code units, a byte each (high, low), and all its code units or-ed
    // (wide): together with its length they are the piece itself when it is that short and narrow.
    let low = text.charCodeAt(index);
    let high = 0;
    let wide = low;
    let after = index + 1;
    if (kind === UPPER || kind === LOWER || ((kind === OTHER || kind === SPACE) && (next === UPPER || next === LOWER))) {
      // The two letter alternatives: an optional prefix, capitals, small letters, a contraction.
      // Only ASCII letters are classed as letters, so the loops test the code units themselves.
      let code = after < end ? text.charCodeAt(after) : 0;
      if (kind !== LOWER) {
        while (isCapital(code)) {
          high = (high << 8) | (low >>> 24);
          low = (low << 8) | code;
          code = ++after < end ? text.charCodeAt(after) : 0;
        }
      }
      while (isSmall(code)) {
        high = (high << 8) | (low >>> 24);
        low = (low << 8) | code;
        code = ++after < end ? text.charCodeAt(after) : 0;
      }
      for (const contractionEnd = code === APOSTROPHE ? afterContraction(text, after, end) : after; after < contractionEnd; after++) {
        const unit = text.charCodeAt(after);
        high = (high << 8) | (low >>> 24);
        low = (low << 8) | unit;
        wide |= unit;
      }
    } else {
      if (kind === DIGIT) {
        // \p{N}{1,3}
        if (next === DIGIT) after++;
        if (next === DIGIT && classAt(text, after, end) === DIGIT) after++;
      } else if (kind === OTHER || (next === OTHER && text.charCodeAt(index) === SPACE_CHAR)) {
        // ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
        if (kind !== OTHER) after++;
        while (classAt(text, after, end) === OTHER) after++;
        for (let trailing = classAt(text, after, end); trailing === NEWLINE || (trailing === OTHER && text.charCodeAt(after) === SLASH); trailing = classAt(text, after, end)) after++;
      } else {
        // Whitespace: '\s*[\r\n]+' up to its last line break, else '\s+(?!\S)' (all but the
        // last character before a non-space), else '\s+'.
        let runEnd = index;
        let lastLineBreak = -1;
        for (let inRun = kind; inRun === SPACE || inRun === NEWLINE; inRun = classAt(text, ++runEnd, end)) if (inRun === NEWLINE) lastLineBreak = runEnd;
        if (lastLineBreak >= 0) after = lastLineBreak + 1;
        else if (runEnd === end || runEnd - index === 1) after = runEnd;
        else after = runEnd - 1;
      }
      for (let inPiece = index + 1; inPiece < after; inPiece++) {
        const unit = text.charCodeAt(inPiece);
        high = (high << 8) | (low >>> 24);
        low = (low << 8) | unit;
        wide |= unit;
      }
    }
    total += pieceTokens(text, index, after, low, high, wide);
    index = after;
  }
  return total;
}

/** The end of `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `index`, or `index` when there is none. */
function afterContraction(text: string, index: number, end: number): number {
  if (index >= end || text.charCodeAt(index) !== APOSTROPHE) return index;
  // `| 0x20` lower-cases an ASCII letter (and maps no other character onto one).
  const first = index + 1 < end ? text.charCodeAt(index + 1) | 0x20 : 0;
  if (first === 0x73 || first === 0x74 || first === 0x6d || first === 0x64) return index + 2; // s t m d
  const second = index + 2 < end ? text.charCodeAt(index + 2) | 0x20 : 0;
  if ((first === 0x6c && second === 0x6c) || (first === 0x76 && second === 0x65) || (first === 0x72 && second === 0x65)) return index + 3; // ll ve re
  return index;
}

/**
 * Counts of pieces seen, found by their last eight code units and their length (open
 * addressing): no substring is made for a piece seen before, and a piece of at most eight code
 * units below 256 (most words with their space, numbers, punctuation) is told apart by those
 * numbers alone, without reading its characters again. A longer or wider piece is compared
 * with the kept one. A slot's key, length and count lie side by side, so a look-up reads one
 * cache line. Emptied when half full, so a text of endless distinct words holds at most
 * TABLE_SIZE / 2 of them.
 */
const TABLE_SIZE = 1 << 16;
const TABLE_MASK = TABLE_SIZE - 1;
/** Longer pieces (rare: a long word or a run of punctuation) are counted, not kept. */
const LONGEST_KEPT_PIECE = 48;
/** Pieces this long or shorter, with no code unit above 255, are whole in their eight bytes. */
const WHOLE_IN_KEY = 8;
/**
 * Added to the length kept for a piece with a code unit above 255: its key has lost bits, so it
 * must never match a narrow piece by the key alone ("!’" and "!\x19" share one).
 */
const WIDE_PIECE = 1 << 16;
const keptPieces: Array<string | undefined> = new Array<string | undefined>(TABLE_SIZE).fill(undefined);
/** Per slot: the key's low and high halves, the piece's length (0: a free slot; WIDE_PIECE added) and its tokens. */
const keptEntries = new Int32Array(TABLE_SIZE * 4);
let keptSize = 0;

/**
 * The tokens of the piece text[start, end), whose last eight code units are `high` and `low`
 * (a byte each) and whose code units or-ed are `wide`.
 */
function pieceTokens(text: string, start: number, end: number, low: number, high: number, wide: number): number {
  const length = end - start;
  if (length > LONGEST_KEPT_PIECE) return countWithGptTokenizer(text.slice(start, end), PLAIN_TEXT);
  const keptLength = wide < 0x100 ? length : length + WIDE_PIECE;
  const wholeInKey = keptLength <= WHOLE_IN_KEY;
  let slot = slotOf(low, high, keptLength);
  for (let entry = slot * 4; keptEntries[entry + 2] !== 0; entry = slot * 4) {
    if (keptEntries[entry] === low && keptEntries[entry + 1] === high && keptEntries[entry + 2] === keptLength && (wholeInKey || holdsAt(text, start, keptPieces[slot]!))) return keptEntries[entry + 3];
    slot = (slot + 1) & TABLE_MASK;
  }
  const piece = text.slice(start, end);
  const tokens = countWithGptTokenizer(piece, PLAIN_TEXT);
  if (keptSize >= TABLE_SIZE / 2) {
    keptPieces.fill(undefined);
    keptEntries.fill(0);
    keptSize = 0;
    slot = slotOf(low, high, keptLength);
  }
  keptPieces[slot] = piece;
  keptEntries.set([low, high, keptLength, tokens], slot * 4);
  keptSize++;
  return tokens;
}

/** The first slot a piece is looked for in: its key's bits mixed (murmur3's finalizer), so that similar words spread. */
function slotOf(low: number, high: number, length: number): number {
  let mixed = low ^ Math.imul(high ^ length, 0x9e3779b1);
  mixed = Math.imul(mixed ^ (mixed >>> 16), 0x85ebca6b);
  mixed = Math.imul(mixed ^ (mixed >>> 13), 0xc2b2ae35);
  return (mixed ^ (mixed >>> 16)) & TABLE_MASK;
}

/** Whether `text` holds `piece` at `start` (a loop: startsWith's call costs more than it compares for a word). */
function holdsAt(text: string, start: number, piece: string): boolean {
  for (let index = 0; index < piece.length; index++) if (piece.charCodeAt(index) !== text.charCodeAt(start + index)) return false;
  return true;
}
