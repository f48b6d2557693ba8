// Turns the wasm-bindgen output into the site the server embeds:
//   node frontend/tools/pack.mjs <staging dir> <public dir> <site dir> [--fast]
// <staging dir> holds harness.js, harness_bg.wasm and harness.css. The files
// get one content-hashed name, `harness-<hash of the three>`, so a new build
// can never be mixed with a cached old one (the server sends them as
// immutable). Every compressible file gets a Brotli (.br) and a gzip (.gz)
// copy next to it when that copy is smaller. The site is written to a fresh
// directory and swapped in at the end, so it never holds two builds' files.
// `.output-name` (not served) tells the server the hashed name. Prints the
// raw, Brotli and gzip size of every file. --fast: Brotli quality 5 instead
// of 11 (for quick local iterations; the sizes printed are then larger).
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import zlib from 'node:zlib';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const fast = process.argv.includes('--fast');
if (args.length !== 3) {
  console.error('usage: pack.mjs <staging dir> <public dir> <site dir> [--fast]');
  process.exit(2);
}
const [staging, publicDir, site] = args;

const js = readFileSync(join(staging, 'harness.js'));
const wasm = readFileSync(join(staging, 'harness_bg.wasm'));
const css = readFileSync(join(staging, 'harness.css'));
const hash = createHash('sha256');
for (const part of [js, wasm, css]) {
  // Length-prefixed so moving bytes between files changes the hash too.
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(part.length));
  hash.update(len);
  hash.update(part);
}
const name = `harness-${hash.digest('hex').slice(0, 16)}`;

const next = `${site}.new`;
rmSync(next, { recursive: true, force: true });
mkdirSync(join(next, 'pkg'), { recursive: true });
if (existsSync(publicDir)) cpSync(publicDir, next, { recursive: true });
writeFileSync(join(next, 'pkg', `${name}.js`), js);
writeFileSync(join(next, 'pkg', `${name}_bg.wasm`), wasm);
writeFileSync(join(next, 'pkg', `${name}.css`), css);
writeFileSync(join(next, '.output-name'), `${name}\n`);

const compressible = /\.(js|mjs|wasm|css|html|svg|json|txt|ico|map)$/;
function files(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (entry.startsWith('.')) return [];
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}
const rows = [];
for (const path of files(next).sort()) {
  const raw = readFileSync(path);
  const row = { file: relative(next, path), raw: raw.length, br: null, gz: null };
  if (compressible.test(path) && raw.length > 256) {
    const br = zlib.brotliCompressSync(raw, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: fast ? 5 : 11,
        [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
        [zlib.constants.BROTLI_PARAM_MODE]: /\.(js|css|html|svg|json|txt)$/.test(path)
          ? zlib.constants.BROTLI_MODE_TEXT
          : zlib.constants.BROTLI_MODE_GENERIC,
      },
    });
    const gz = zlib.gzipSync(raw, { level: 9 });
    if (br.length < raw.length) {
      writeFileSync(`${path}.br`, br);
      row.br = br.length;
    }
    if (gz.length < raw.length) {
      writeFileSync(`${path}.gz`, gz);
      row.gz = gz.length;
    }
  }
  rows.push(row);
}

// Swap the new site in; the old one (and its stale hashed files) goes.
const old = `${site}.old`;
rmSync(old, { recursive: true, force: true });
mkdirSync(dirname(site), { recursive: true });
if (existsSync(site)) renameSync(site, old);
renameSync(next, site);
rmSync(old, { recursive: true, force: true });

const kb = (n) => (n == null ? '-' : `${(n / 1024).toFixed(1)} KiB`);
console.log(`site ${site} (${name})`);
console.log(`${'file'.padEnd(44)} ${'raw'.padStart(12)} ${'brotli'.padStart(12)} ${'gzip'.padStart(12)}`);
for (const r of rows) {
  console.log(`${r.file.padEnd(44)} ${kb(r.raw).padStart(12)} ${kb(r.br).padStart(12)} ${kb(r.gz).padStart(12)}`);
}
const total = (k) => rows.reduce((sum, r) => sum + (r[k] ?? r.raw), 0);
console.log(`${'total'.padEnd(44)} ${kb(total('raw')).padStart(12)} ${kb(total('br')).padStart(12)} ${kb(total('gz')).padStart(12)}`);
