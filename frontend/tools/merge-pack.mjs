// One wasm module out of the chunks a lazy page loads, for its
// pack (pack.mjs): instantiated once instead of one module per chunk (the task
// page had 74), and compiled while it downloads.
//
// wasm-split's chunks call each other and the main module through the shared
// table, so all they import is what `__wasm_split` gives every chunk (the
// memory, the function table, the stack pointer). binaryen's wasm-merge (npm
// binaryen, with wasm-opt) joins modules but keeps each one's imports apart
// (74 memories); a small shim module named `__wasm_split` that imports each of
// those once, from `pack`, and exports it, becomes what every chunk's import
// resolves to, so the merged module imports each once, from `pack` (the
// loader passes `{ pack: imports.__wasm_split }`).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Reader, sections } from './wasm-bytes.mjs';

const BIN = join(dirname(fileURLToPath(import.meta.url)), 'node_modules', '.bin');
/** The import module of the merged module (what the loader passes it). */
export const PACK_IMPORTS = 'pack';
const SHARED = '__wasm_split';
// The binaryen tools' feature flags (wasm-features.txt, as build-site.sh's wasm-opt).
const FEATURES = readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'wasm-features.txt'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() && !l.startsWith('#'));

/**
 * The imports of a wasm module: `{ module, name, kind, type, min }`, `type`
 * as WAT, `min` a memory's or table's least size (any maximum is dropped).
 */
export function importsOf(bytes, what = 'module') {
  const section = sections(bytes, `merge-pack: ${what}`).find((s) => s.id === 2);
  if (!section) return [];
  const r = new Reader(bytes, section.start);
  const limits = () => {
    const flags = r.byte();
    if (flags & ~1) throw new Error(`merge-pack: ${what}: a shared or 64-bit import (limits flags ${flags})`);
    const min = r.u32();
    if (flags & 1) r.u32();
    return min;
  };
  const VAL = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64' };
  const REF = { 0x70: 'funcref', 0x6f: 'externref' };
  const imports = [];
  for (let n = r.u32(); n > 0; n--) {
    const [module, name, kind] = [r.str(), r.str(), r.byte()];
    if (kind === 1) {
      const ref = REF[r.byte()];
      if (!ref) throw new Error(`merge-pack: ${what}: table ${name} of an unknown element type`);
      imports.push({ module, name, kind: 'table', type: ref, min: limits() });
    } else if (kind === 2) {
      imports.push({ module, name, kind: 'memory', type: '', min: limits() });
    } else if (kind === 3) {
      const val = VAL[r.byte()];
      const mutable = r.byte() === 1;
      if (!val) throw new Error(`merge-pack: ${what}: global ${name} of an unknown type`);
      imports.push({ module, name, kind: 'global', type: mutable ? `(mut ${val})` : val, min: '' });
    } else {
      throw new Error(`merge-pack: ${what} imports ${module}.${name} of kind ${kind}; a chunk was expected to import only memories, tables and globals (wasm-split output changed?)`);
    }
  }
  return imports;
}

/**
 * `chunks` (`[{ name, bytes }]`, the page's own last) as one module. Throws,
 * naming the chunk, when a chunk imports anything but `__wasm_split`'s shared
 * memory, table and globals, or when the result does not validate.
 */
export function mergeChunks(chunks) {
  const shared = new Map();
  for (const { name, bytes } of chunks) {
    for (const imp of importsOf(bytes, name)) {
      if (imp.module !== SHARED) {
        throw new Error(`merge-pack: ${name} imports from ${imp.module}, not ${SHARED} (wasm-split output changed?)`);
      }
      const known = shared.get(imp.name);
      if (known && (known.kind !== imp.kind || known.type !== imp.type)) {
        throw new Error(`merge-pack: ${name} imports ${imp.name} as another ${imp.kind} than the chunks before it`);
      }
      // The shim asks for the largest size any chunk needs (and wasm-merge checks it).
      shared.set(imp.name, known && known.min > imp.min ? known : imp);
    }
  }
  const ident = (s) => JSON.stringify(s);
  const shim = ['(module'];
  [...shared.values()].forEach(({ name, kind, type, min }, i) => {
    shim.push(` (import ${ident(PACK_IMPORTS)} ${ident(name)} (${kind} $i${i} ${min} ${type}))`);
    shim.push(` (export ${ident(name)} (${kind} $i${i}))`);
  });
  shim.push(')');
  const dir = mkdtempSync(join(tmpdir(), 'harness-pack-'));
  try {
    writeFileSync(join(dir, 'shim.wat'), shim.join('\n'));
    execFileSync(join(BIN, 'wasm-as'), [...FEATURES, join(dir, 'shim.wat'), '-o', join(dir, 'shim.wasm')]);
    const args = [join(dir, 'shim.wasm'), SHARED];
    chunks.forEach(({ bytes }, i) => {
      writeFileSync(join(dir, `${i}.wasm`), bytes);
      args.push(join(dir, `${i}.wasm`), `chunk${i}`);
    });
    try {
      execFileSync(join(BIN, 'wasm-merge'), [...args, ...FEATURES, '-o', join(dir, 'merged.wasm')], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    } catch (e) {
      // binaryen prints the whole module with a validation error: its first lines say what.
      const said = String(e.stderr ?? e.message).split('\n').filter((l) => !/^\s*[()]/.test(l)).slice(0, 8);
      throw new Error(`merge-pack: wasm-merge failed: ${said.join(' | ')}`);
    }
    const merged = readFileSync(join(dir, 'merged.wasm'));
    if (!WebAssembly.validate(merged)) throw new Error('merge-pack: the merged module does not validate');
    const left = importsOf(merged, 'the merged module');
    if (left.some((i) => i.module !== PACK_IMPORTS) || left.length !== shared.size) {
      throw new Error(`merge-pack: the merged module imports ${left.map((i) => `${i.module}.${i.name}`).join(', ')}`);
    }
    return merged;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
