// What a wasm module's code is made of, by crate (a twiggy-like summary
// with nothing to install): reads the function names of the `name` section
// (present in cargo's output, before wasm-bindgen strips it) and the body
// size of every function in the code section, and sums them by the first
// path segment of the (demangled) name, generic instantiations attributed to
// the crate that defines the function.
//   node frontend/tools/wasm-top.mjs <module.wasm> [rows (25)] [--functions]
// --functions lists the biggest single functions instead.
import { readFileSync } from 'node:fs';
import { Reader, sections } from './wasm-bytes.mjs';

const [path, rowsArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (!path) {
  console.error('usage: wasm-top.mjs <module.wasm> [rows] [--functions]');
  process.exit(2);
}
const rows = Number(rowsArg ?? 25);
const buf = readFileSync(path);

let imported = 0;
const bodies = [];
const names = new Map();
const sectionSizes = [];
for (const { id, start, end } of sections(buf, path)) {
  const r = new Reader(buf, start);
  const size = end - start;
  if (id === 2) {
    for (let n = r.u32(), i = 0; i < n; i++) {
      r.str();
      r.str();
      const kind = r.byte();
      if (kind === 0) { r.u32(); imported++; } else if (kind === 1) { r.pos++; const f = r.u32(); r.u32(); if (f & 1) r.u32(); }
      else if (kind === 2) { const f = r.u32(); r.u32(); if (f & 1) r.u32(); } else if (kind === 3) { r.pos += 2; } else { r.pos++; r.u32(); }
    }
  } else if (id === 10) {
    for (let n = r.u32(), i = 0; i < n; i++) {
      const len = r.u32();
      bodies.push(len);
      r.pos += len;
    }
  } else if (id === 0) {
    const name = r.str();
    sectionSizes.push([`custom:${name}`, size]);
    if (name === 'name') {
      while (r.pos < end) {
        const sub = r.byte();
        const subEnd = r.u32() + r.pos;
        if (sub === 1) for (let n = r.u32(), i = 0; i < n; i++) { const idx = r.u32(); names.set(idx, r.str()); }
        r.pos = subEnd;
      }
    }
  }
  if (id !== 0) sectionSizes.push([`section ${id}`, size]);
}
if (names.size === 0) {
  console.error(`${path}: no name section (use cargo's output, before wasm-bindgen --remove-name-section)`);
  process.exit(1);
}

// Legacy Rust mangling (`_ZN3foo3bar17h<hash>E`) to `foo::bar`.
const ESCAPES = { SP: '@', BP: '*', RF: '&', LT: '<', GT: '>', LP: '(', RP: ')', C: ',' };
// v0 mangling (`_RNv…Cs<hash>_4core3num…`, the standard library's symbols):
// the crate (its first crate root) and the function's own name (the last
// identifier whose length prefix fits), `crate::…::name` — enough to sum by
// crate and to recognise the function; generic arguments are not decoded.
const demangleV0 = (name) => {
  const root = /Cs[0-9A-Za-z]*_([1-9][0-9]*)/.exec(name);
  if (!root) return name;
  const len = Number(root[1]);
  const at = root.index + root[0].length;
  const crate = name.slice(at, at + len);
  let last = '';
  const re = /([1-9][0-9]*)_?([A-Za-z_][A-Za-z0-9_]*)/g;
  re.lastIndex = at + len;
  for (let m; (m = re.exec(name)); ) {
    const n = Number(m[1]);
    if (m[2].length >= n) {
      last = m[2].slice(0, n);
      re.lastIndex = m.index + m[1].length + (m[0].length - m[1].length - m[2].length) + n;
    }
  }
  return last && last !== crate ? `${crate}::…::${last}` : crate;
};
const demangle = (name) => {
  if (name.startsWith('_R')) return demangleV0(name);
  if (!name.startsWith('_ZN')) return name;
  const parts = [];
  let i = 3;
  while (i < name.length && name[i] !== 'E') {
    const m = /^\d+/.exec(name.slice(i));
    if (!m) break;
    i += m[0].length;
    parts.push(name.slice(i, i + Number(m[0])));
    i += Number(m[0]);
  }
  if (parts.length && /^h[0-9a-f]{16}$/.test(parts[parts.length - 1])) parts.pop();
  return parts
    .map((p) => p.replace(/^_\$/, '$').replace(/\$([A-Z]+|u[0-9a-f]+)\$/g, (_, e) => (e[0] === 'u' && e.length > 1 ? String.fromCodePoint(parseInt(e.slice(1), 16)) : ESCAPES[e] ?? e)).replace(/\.\./g, '::'))
    .join('::');
};
const total = bodies.reduce((a, b) => a + b, 0);
const crateOf = (mangled) => {
  const name = demangle(mangled);
  // `<T as trait::Path>::f`: the type's crate when it has a path, else the
  // trait's; `core::ptr::drop_in_place<app::X>`: the dropped type's crate.
  const as = name.match(/^<(?:&(?:mut )?)?([A-Za-z_][A-Za-z0-9_]*)(::)?[^ ]* as ([A-Za-z_][A-Za-z0-9_]*)::/);
  if (as) return as[2] ? as[1] : as[3];
  const impl = name.match(/^<impl [^ ]*? for ([A-Za-z_][A-Za-z0-9_]*)::/);
  if (impl) return impl[1];
  const head = name.split('::')[0].replace(/^<+/, '').replace(/[^A-Za-z0-9_].*$/, '');
  return head || '(other)';
};
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`${path}: ${kib(buf.length)} file, ${kib(total)} code in ${bodies.length} functions`);
if (process.argv.includes('--functions')) {
  const list = bodies.map((len, i) => [demangle(names.get(i + imported) ?? `#${i + imported}`), len]).sort((a, b) => b[1] - a[1]);
  for (const [name, len] of list.slice(0, rows)) console.log(`${kib(len).padStart(10)}  ${name.slice(0, 150)}`);
} else {
  const byCrate = new Map();
  bodies.forEach((len, i) => {
    const crate = crateOf(names.get(i + imported) ?? '(unnamed)');
    const e = byCrate.get(crate) ?? { bytes: 0, count: 0 };
    e.bytes += len;
    e.count += 1;
    byCrate.set(crate, e);
  });
  console.log(`${'crate'.padEnd(28)} ${'code'.padStart(10)} ${'share'.padStart(6)} ${'functions'.padStart(9)}`);
  for (const [crate, e] of [...byCrate].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, rows)) {
    console.log(`${crate.padEnd(28)} ${kib(e.bytes).padStart(10)} ${((100 * e.bytes) / total).toFixed(1).padStart(5)}% ${String(e.count).padStart(9)}`);
  }
  console.log('sections:', sectionSizes.map(([n, s]) => `${n} ${kib(s)}`).join(', '));
}
