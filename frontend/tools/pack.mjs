// Turns the wasm-bindgen output into the site the server embeds:
//   node frontend/tools/pack.mjs <staging dir> <public dir> <site dir> [--fast] [--budget <file>]
// <staging dir> holds harness.js, harness_bg.wasm and harness.css, and the
// browser terminal's own module, harness_term.js and harness_term_bg.wasm
// (loaded only by pages that show a terminal), and what wasm-split-cli cut
// out of the hydrate module (scripts/build-site.sh): the loader
// `__wasm_split.js`, a `split_<page>_<n>.wasm` per lazy route and
// `chunk_<n>.wasm` for code lazy routes share. The files get one
// content-hashed name, `harness-<hash of them all>` (`…_term.js` for the
// terminal, `…_split.js` for the loader, `…_split_<page>_<n>.wasm`,
// `…_chunk_<n>.wasm`), so a new build can never be mixed with a cached old
// one (the server sends them as immutable). The references between them
// (the main JS imports the loader, the loader imports the main JS and
// fetches the chunks) are rewritten to the hashed names, then the JS is
// minified (npm esbuild). `…_pack_<page>.wasm` is, per lazy page, the chunks
// it loads merged into one module (merge-pack.mjs: one request and one
// instantiation when the page is opened directly), and `.split-manifest.json` (not served) names that
// pack for each page (a lazy part's chunks for a part), for the server's
// preload hints. Every
// compressible file gets a Brotli (.br) and a gzip (.gz) copy next to it
// when that copy is smaller. The site is written to a fresh
// directory and swapped in at the end, so it never holds two builds' files.
// `.output-name` (not served) tells the server the hashed name. Prints the
// raw, Brotli and gzip size of every file. --fast: Brotli quality 5 instead
// of 11 (for quick local iterations; the sizes printed are then larger).
// --budget <file>: every file under pkg/ must have a line there and stay
// within its raw and Brotli size (see frontend/size-budget.txt); otherwise
// nothing is swapped in and the exit status is 1, naming the file and budget.
// A lazy page's file is budgeted without its number: harness_split_<page>.wasm;
// a line `harness_chunk_*.wasm` bounds each shared chunk.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import zlib from 'node:zlib';
import { transformSync } from 'esbuild';
import { mergeChunks, PACK_IMPORTS } from './merge-pack.mjs';

const argv = process.argv.slice(2);
const budgetAt = argv.indexOf('--budget');
const budgetFile = budgetAt >= 0 ? argv[budgetAt + 1] : null;
const args = argv.filter((a, i) => !a.startsWith('--') && !(budgetAt >= 0 && i === budgetAt + 1));
const fast = argv.includes('--fast');
if (args.length !== 3 || (budgetAt >= 0 && !budgetFile)) {
  console.error('usage: pack.mjs <staging dir> <public dir> <site dir> [--fast] [--budget <file>]');
  process.exit(2);
}
const [staging, publicDir, site] = args;

// Staged file -> its suffix after the hashed base name.
const PARTS = [
  ['harness.js', '.js', true],
  ['harness_bg.wasm', '_bg.wasm', true],
  ['harness.css', '.css', true],
  ['harness_term.js', '_term.js', false],
  ['harness_term_bg.wasm', '_term_bg.wasm', false],
];
// wasm-split-cli's output: the loader and the chunks, by their own names.
const LOADER = '__wasm_split.js';
// The split manifest (not served; the server reads it): lazy page -> the
// hashed names (without `.wasm`) of the chunks it loads.
const SPLIT_MANIFEST = '.split-manifest.json';
const chunkFile = /^(split_[a-z0-9_]+|chunk_[0-9]+)\.wasm$/;
const split = existsSync(join(staging, LOADER))
  ? [[LOADER, '_split.js', true]].concat(
      readdirSync(staging)
        .filter((f) => chunkFile.test(f))
        .sort()
        // split___settings_route_view_<n>.wasm -> <name>_split_settings_route_view_<n>.wasm
        .map((f) => [f, `_${f.replace(/^split_+/, 'split_')}`, true]),
    )
  : [];
const parts = PARTS.concat(split).flatMap(([file, suffix, required]) => {
  const path = join(staging, file);
  if (!existsSync(path)) {
    if (required) throw new Error(`pack: ${path} missing`);
    return [];
  }
  return [{ file, suffix, bytes: readFileSync(path) }];
});
const hash = createHash('sha256');
for (const { bytes: part } of parts) {
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
// The hash is of the files as wasm-split and wasm-bindgen wrote them; the
// references between them are rewritten after, to the hashed names.
// Only module specifiers and fetched URLs: `from "./x"` and `URL("./x"`.
// (The main JS also names the loader as the wasm's import module, an object
// key that must stay as the wasm has it.)
function rewrite(part, from, to) {
  const text = part.bytes.toString('utf8');
  const escaped = from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`(from\\s*|URL\\()(["'])\\./${escaped}\\2`, 'g');
  if (!re.test(text)) {
    throw new Error(`pack: ${part.file} does not reference ./${from} (wasm-split/wasm-bindgen output changed?)`);
  }
  part.bytes = Buffer.from(text.replace(re, (_, lead, quote) => `${lead}${quote}./${to}${quote}`));
}
// The chunks each lazy page needs (its own and the shared ones it waits
// for), read from the loader as wasm-split wrote it: the server sends them as
// `<link rel="preload">` with a page that opens on that route, so they load
// in parallel with the main module instead of after it.
// wasm-split-cli computes this map but its binary does not write it.
function splitManifest(loaderText, hashedStem) {
  const fileOf = (body) => body.match(/"\.\/((?:split|chunk)_[A-Za-z0-9_]+)\.wasm"/)?.[1];
  const chunks = new Map();
  for (const m of loaderText.matchAll(/const (__chunk_[0-9]+) = makeLoad\(([\s\S]*?), \[\]\);/g)) {
    chunks.set(m[1], fileOf(m[2]));
  }
  const manifest = {};
  const loads = /export const __wasm_split_load_([A-Za-z0-9_]+) = wrapAsyncCb\(makeLoad\(([\s\S]*?), \[([^\]]*)\]\)\);/g;
  for (const [, split, body, deps] of loaderText.matchAll(loads)) {
    const files = deps
      .split(',')
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => {
        if (!chunks.has(d)) throw new Error(`pack: ${LOADER}: ${split} needs ${d}, which it does not define`);
        return chunks.get(d);
      });
    files.push(fileOf(body));
    manifest[split] = files.filter(Boolean).map(hashedStem);
  }
  if (!Object.keys(manifest).length) {
    throw new Error(`pack: ${LOADER} defines no page loader (wasm-split output changed?)`);
  }
  return manifest;
}
// One file per lazy page: a page opened directly needs its own
// chunk and up to ~70 shared ones before it can hydrate, and over HTTP/1.1
// (six connections, a phone's round trip each) their requests queued behind
// each other. `…_pack_<page>.wasm` is those chunks merged into one module; the
// manifest names it instead of them (so the shell preloads one file), and the
// loader instantiates a pack this document preloaded for the first of its
// chunks the page asks for, else fetches the chunk itself as before (a page reached by client-side navigation, a part loaded
// on demand, a failed pack). Lazy parts (not `_route_view_`) get no pack:
// they are never preloaded.
function packPages(manifest, loader, chunkBytes) {
  // A chunk is named by its number (chunk_<n>), a page's own file by its
  // name (split_<page>_<n>): the index is in the loader every page loads.
  const keyOf = (stem) => {
    const m = /^[^_]+_(?:chunk_([0-9]+)|(split_[a-z0-9_]+))$/.exec(stem);
    if (!m) throw new Error(`pack: unexpected chunk name ${stem}`);
    return m[1] !== undefined ? Number(m[1]) : m[2];
  };
  const packs = {};
  for (const [page, stems] of Object.entries(manifest)) {
    if (!/_route_view_/.test(page)) continue;
    const suffix = `_pack_${page.replace(/^_+/, '').replace(/_[0-9]+$/, '')}.wasm`;
    const chunks = stems.map((stem) => {
      const bytes = chunkBytes.get(`${stem}.wasm`);
      if (!bytes) throw new Error(`pack: ${page} needs ${stem}.wasm, which is not staged`);
      return { name: `${stem}.wasm`, bytes };
    });
    packs[`./${name}${suffix}`] = stems.map(keyOf);
    parts.push({ file: `${name}${suffix}`, suffix, bytes: mergeChunks(chunks) });
    manifest[page] = [`${name}${suffix.replace(/\.wasm$/, '')}`];
  }
  const text = loader.bytes.toString('utf8');
  const fetches = /fetch\(new URL\((["'])(\.\/[^"']+\.wasm)\1, import\.meta\.url\)\)/g;
  if (!fetches.test(text)) throw new Error(`pack: ${LOADER} fetches no chunk with new URL(…) (wasm-split output changed?)`);
  const runtime = `
const PACKS = ${JSON.stringify(packs)};
// The packs this page preloaded (read before hydration may touch the head).
const PRELOADED = new Set(typeof document === "undefined" ? [] :
  [...document.querySelectorAll('link[rel="preload"]')].map((l) => l.href));
const keyOf = (file) => {
  const m = /^\\.\\/[^_]+_(?:chunk_([0-9]+)|(split_[a-z0-9_]+))\\.wasm$/.exec(file);
  return m && (m[1] !== undefined ? Number(m[1]) : m[2]);
};
// A preloaded pack is the page's chunks merged into one module
// (merge-pack.mjs): compiled while it downloads, and instantiated once, when
// the page asks for its first chunk; every chunk of it then resolves to that
// one instance (one instantiation per chunk, 74 on the task page,
// were most of a phone's time between the last byte and the page hydrated).
const packed = new Map();
for (const [pack, keys] of Object.entries(PACKS)) {
  const url = new URL(pack, import.meta.url);
  if (!PRELOADED.has(url.href)) continue;
  const module = WebAssembly.compileStreaming(fetch(url));
  module.catch(() => {});
  let instance;
  const entry = {
    module,
    instantiate: (imports) => {
      if (!instance) {
        instance = module.then((m) => WebAssembly.instantiate(m, { ${PACK_IMPORTS}: imports.__wasm_split }));
        instance.catch((e) => console.error(\`\${url}: \${e}; its chunks are fetched one by one\`));
      }
      return instance;
    },
  };
  for (const key of keys) if (!packed.has(key)) packed.set(key, entry);
}
// What a chunk is instantiated from: its page's pack, else its file (a page
// reached by client-side navigation, a part loaded on demand, a failed pack).
function fetchChunk(file) {
  const pack = packed.get(keyOf(file));
  const own = () => fetch(new URL(file, import.meta.url));
  if (pack) return pack.module.then(() => ({ pack, own }), own);
  return own();
}
async function instantiateChunk(source, imports) {
  const s = await source;
  if (s.pack) {
    try {
      return await s.pack.instantiate(imports);
    } catch {
      return WebAssembly.instantiateStreaming(s.own(), imports);
    }
  }
  return WebAssembly.instantiateStreaming(s, imports);
}
`;
  const instantiates = /WebAssembly\.instantiateStreaming\(/g;
  const [nFetches, nInstantiates] = [text.match(fetches).length, (text.match(instantiates) ?? []).length];
  if (nFetches !== nInstantiates) {
    throw new Error(`pack: ${LOADER} fetches ${nFetches} chunks but instantiates ${nInstantiates} (wasm-split output changed?)`);
  }
  loader.bytes = Buffer.from(runtime + text
    .replace(fetches, (_, q, file) => `fetchChunk(${q}${file}${q})`)
    .replace(instantiates, 'instantiateChunk('));
}
if (split.length) {
  const byFile = new Map(parts.map((p) => [p.file, p]));
  const stemOf = new Map(split.slice(1).map(([file, suffix]) => [file.replace(/\.wasm$/, ''), `${name}${suffix.replace(/\.wasm$/, '')}`]));
  const manifest = splitManifest(byFile.get(LOADER).bytes.toString('utf8'), (stem) => {
    if (!stemOf.has(stem)) throw new Error(`pack: ${LOADER} fetches ./${stem}.wasm, which wasm-split did not write`);
    return stemOf.get(stem);
  });
  const loader = byFile.get(LOADER);
  rewrite(byFile.get('harness.js'), LOADER, `${name}_split.js`);
  rewrite(loader, 'harness.js', `${name}.js`);
  for (const [file, suffix] of split.slice(1)) rewrite(loader, file, `${name}${suffix}`);
  packPages(manifest, loader, new Map(split.slice(1).map(([file, suffix]) => [`${name}${suffix}`, byFile.get(file).bytes])));
  writeFileSync(join(next, SPLIT_MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);
}
// The JS (wasm-bindgen's glue, the split loader) minified: whitespace,
// comments and local names (exports, imports and property names stay, so
// the wasm's imports and the modules' references to each other still match).
// `/harness` loads the glue and the loader.
// The stylesheet too (comments, whitespace, shorter colours and values).
for (const part of parts.filter((p) => /\.(js|css)$/.test(p.file))) {
  const options = part.file.endsWith('.css')
    ? { loader: 'css', minify: true, legalComments: 'none' }
    : { minify: true, format: 'esm', legalComments: 'none' };
  part.bytes = Buffer.from(transformSync(part.bytes.toString('utf8'), options).code);
}
for (const { suffix, bytes } of parts) writeFileSync(join(next, 'pkg', `${name}${suffix}`), bytes);
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

// The budget, before anything is swapped in.
const kb = (n) => (n == null ? '-' : `${(n / 1024).toFixed(1)} KiB`);
if (budgetFile) {
  const budget = new Map();
  for (const [i, line] of readFileSync(budgetFile, 'utf8').split('\n').entries()) {
    const text = line.replace(/#.*/, '').trim();
    if (!text) continue;
    const [file, raw, br] = text.split(/\s+/);
    if (!file || !(Number(raw) > 0) || !(Number(br) > 0)) {
      console.error(`pack: ${budgetFile}:${i + 1}: expected "<file> <raw KiB> <brotli KiB>", got "${line}"`);
      process.exit(2);
    }
    budget.set(file, { raw: Number(raw) * 1024, br: Number(br) * 1024, line: i + 1 });
  }
  // A name with `*` bounds each file it matches (the chunks of shared code,
  // numbered by wasm-split), unless the file has a line of its own.
  const patterns = [...budget.entries()]
    .filter(([k]) => k.includes('*'))
    .map(([k, b]) => [new RegExp(`^${k.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`), b]);
  const over = [];
  for (const r of rows.filter((r) => r.file.startsWith('pkg/'))) {
    // The budget names files without the build's hash: pkg/harness-<hash>_bg.wasm -> harness_bg.wasm.
    // A lazy page's chunk without its number (the hash of its source location).
    const logical = r.file
      .slice('pkg/'.length)
      .replace(name, 'harness')
      .replace(/^(harness_split_[a-z0-9_]+?)_[0-9]+\.wasm$/, '$1.wasm');
    const b = budget.get(logical) ?? patterns.find(([re]) => re.test(logical))?.[1];
    if (!b) {
      over.push(`${r.file}: no budget for "${logical}" (add a line "${logical} <raw KiB> <brotli KiB>" to ${budgetFile})`);
      continue;
    }
    const where = `${budgetFile}:${b.line}`;
    if (r.raw > b.raw) over.push(`${r.file} (${logical}): ${kb(r.raw)} raw is over its budget of ${kb(b.raw)} (${where})`);
    if (!fast && r.br != null && r.br > b.br) {
      over.push(`${r.file} (${logical}): ${kb(r.br)} Brotli is over its budget of ${kb(b.br)} (${where})`);
    }
  }
  if (over.length) {
    for (const o of over) console.error(`size budget: ${o}`);
    console.error('size budget: make the file smaller, or raise its line in the budget with the reason (a visible one-line change)');
    rmSync(next, { recursive: true, force: true });
    process.exit(1);
  }
  console.log(`size budget ${budgetFile}: every pkg/ file within its budget${fast ? ' (raw only: --fast Brotli)' : ''}`);
}

// Swap the new site in; the old one (and its stale hashed files) goes.
const old = `${site}.old`;
rmSync(old, { recursive: true, force: true });
mkdirSync(dirname(site), { recursive: true });
if (existsSync(site)) renameSync(site, old);
renameSync(next, site);
rmSync(old, { recursive: true, force: true });

console.log(`site ${site} (${name})`);
console.log(`${'file'.padEnd(44)} ${'raw'.padStart(12)} ${'brotli'.padStart(12)} ${'gzip'.padStart(12)}`);
for (const r of rows) {
  console.log(`${r.file.padEnd(44)} ${kb(r.raw).padStart(12)} ${kb(r.br).padStart(12)} ${kb(r.gz).padStart(12)}`);
}
const total = (k) => rows.reduce((sum, r) => sum + (r[k] ?? r.raw), 0);
console.log(`${'total'.padEnd(44)} ${kb(total('raw')).padStart(12)} ${kb(total('br')).padStart(12)} ${kb(total('gz')).padStart(12)}`);
