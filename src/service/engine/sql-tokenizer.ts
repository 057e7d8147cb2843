/**
 * A tokenizer for DuckDB's SQL dialect, precise about the parts that hide text from a naive scan: '…' strings with
 * '' escapes, E'…' strings with backslash escapes, $tag$…$tag$ strings, "quoted identifiers" with "" escapes,
 * -- line comments and nested /* block comments *\/ (DuckDB nests them, as PostgreSQL does).
 */
export type TokenKind = 'word' | 'quoted_identifier' | 'string' | 'number' | 'semicolon' | 'symbol' | 'parameter';

export interface Token {
  kind: TokenKind;
  /** For words, the NFKC-normalized lower-case text; for strings and quoted identifiers, the unescaped content. */
  value: string;
  start: number;
  end: number;
}

export class SqlTokenizeError extends Error {}

const WORD_START = /[\p{L}_]/u;
const WORD_PART = /[\p{L}\p{N}_$]/u;

function readQuoted(
  sql: string,
  from: number,
  quote: string,
  backslashEscapes: boolean,
): { content: string; end: number } {
  let content = '';
  let i = from;
  while (i < sql.length) {
    const ch = sql[i] as string;
    if (backslashEscapes && ch === '\\' && i + 1 < sql.length) {
      content += sql[i + 1];
      i += 2;
      continue;
    }
    if (ch === quote) {
      if (sql[i + 1] === quote) {
        content += quote;
        i += 2;
        continue;
      }
      return { content, end: i + 1 };
    }
    content += ch;
    i++;
  }
  throw new SqlTokenizeError(`Unterminated ${quote === '"' ? 'quoted identifier' : 'string literal'}.`);
}

function skipBlockComment(sql: string, from: number): number {
  let depth = 1;
  let i = from + 2;
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth++;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  throw new SqlTokenizeError('Unterminated /* comment.');
}

export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] as string;
    const start = i;
    if (/\s/u.test(ch)) {
      i++;
    } else if (sql.startsWith('--', i)) {
      const newline = sql.indexOf('\n', i);
      i = newline === -1 ? sql.length : newline + 1;
    } else if (sql.startsWith('/*', i)) {
      i = skipBlockComment(sql, i);
    } else if (ch === "'") {
      const { content, end } = readQuoted(sql, i + 1, "'", false);
      tokens.push({ kind: 'string', value: content, start, end });
      i = end;
    } else if ((ch === 'e' || ch === 'E') && sql[i + 1] === "'") {
      const { content, end } = readQuoted(sql, i + 2, "'", true);
      tokens.push({ kind: 'string', value: content, start, end });
      i = end;
    } else if (ch === '"') {
      const { content, end } = readQuoted(sql, i + 1, '"', false);
      tokens.push({ kind: 'quoted_identifier', value: content, start, end });
      i = end;
    } else if (ch === '$') {
      const tag = /^\$([\p{L}_][\p{L}\p{N}_]*)?\$/u.exec(sql.slice(i));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        if (close === -1) throw new SqlTokenizeError('Unterminated $-quoted string.');
        tokens.push({ kind: 'string', value: sql.slice(i + tag[0].length, close), start, end: close + tag[0].length });
        i = close + tag[0].length;
      } else {
        const param = /^\$\d+/.exec(sql.slice(i));
        i += param ? param[0].length : 1;
        tokens.push({ kind: param ? 'parameter' : 'symbol', value: sql.slice(start, i), start, end: i });
      }
    } else if (ch === ';') {
      tokens.push({ kind: 'semicolon', value: ';', start, end: i + 1 });
      i++;
    } else if (/[0-9]/.test(ch) || (ch === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      const number = /^(\d[\d_]*)?(\.\d[\d_]*)?([eE][+-]?\d+)?/.exec(sql.slice(i));
      i += Math.max(1, number?.[0].length ?? 1);
      tokens.push({ kind: 'number', value: sql.slice(start, i), start, end: i });
    } else if (WORD_START.test(ch)) {
      while (i < sql.length && WORD_PART.test(sql[i] as string)) i++;
      tokens.push({ kind: 'word', value: sql.slice(start, i).normalize('NFKC').toLowerCase(), start, end: i });
    } else {
      i++;
      tokens.push({ kind: 'symbol', value: ch, start, end: i });
    }
  }
  return tokens;
}
