/** What a secret is replaced with in a log line. */
export const REDACTED = '[REDACTED]';

/** An API key of ours (`igw_` and 43 characters), wherever it appears; its first ten characters (the key prefix billing shows) stay. */
const API_KEY_ANYWHERE = /\b(igw_[A-Za-z0-9_-]{6})[A-Za-z0-9_-]{37}/g;
/** A bearer credential of any kind (the token68 characters of RFC 7235). */
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]+/gi;
/** A key in a query string (`?key=`, Google's clients' placement), whatever the key looks like. */
const QUERY_KEY = /([?&]key=)[^&#\s"']+/gi;
/** Secrets shorter than this are not looked for: they would match ordinary words. */
const SHORTEST_SECRET = 8;

let knownSecrets: string[] = [];

/**
 * The process's secrets (the admin token, provider keys): replaced wherever a log line quotes
 * them, say in an upstream's error message that echoes the key it was sent.
 */
export function registerLogSecrets(secrets: ReadonlyArray<string | undefined>): void {
  const added = secrets.filter((secret): secret is string => typeof secret === 'string' && secret.length >= SHORTEST_SECRET);
  // Longest first, so a secret that contains another is replaced whole.
  knownSecrets = [...new Set([...knownSecrets, ...added])].sort((a, b) => b.length - a.length);
}

/** `text` with every secret the process knows, every API key and every bearer credential replaced. */
export function redactSecrets(text: string): string {
  let redacted = text;
  for (const secret of knownSecrets) if (redacted.includes(secret)) redacted = redacted.split(secret).join(REDACTED);
  if (redacted.includes('igw_')) redacted = redacted.replace(API_KEY_ANYWHERE, `$1${REDACTED}`);
  if (/bearer/i.test(redacted)) redacted = redacted.replace(BEARER, `$1${REDACTED}`);
  if (/key=/i.test(redacted)) redacted = redacted.replace(QUERY_KEY, `$1${REDACTED}`);
  return redacted;
}
