import { readFileSync } from 'node:fs';
import path from 'node:path';
import { luaFieldReader } from './lua-arguments';

/** A script of lua/, as shipped beside this module (the build copies *.lua into dist/). */
const readScript = (name: string) => readFileSync(path.join(__dirname, 'lua', `${name}.lua`), 'utf8');

export interface LimitScripts {
  admit: string;
  renew: string;
  available: string;
}

let scripts: LimitScripts | undefined;

/** The Redis limit store's scripts, each with the field reader before it (and the money function where it counts money). */
export function limitScripts(): LimitScripts {
  if (scripts) return scripts;
  const prelude = luaFieldReader();
  const spendable = readScript('spendable');
  scripts = {
    admit: `${prelude}${spendable}${readScript('admit')}`,
    renew: `${prelude}${readScript('renew')}`,
    available: `${prelude}${spendable}${readScript('available')}`,
  };
  return scripts;
}
