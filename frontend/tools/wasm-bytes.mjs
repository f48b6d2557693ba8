// Reading a wasm module's binary format, for the build tools (wasm-top.mjs,
// merge-pack.mjs): a cursor over its bytes with the format's LEB128 numbers
// and length-prefixed names, and the list of its sections.

export class Reader {
  constructor(bytes, pos = 0) {
    this.bytes = bytes;
    this.pos = pos;
  }

  byte() {
    return this.bytes[this.pos++];
  }

  /** An unsigned LEB128 number (a truncated one ends at the buffer's end). */
  u32() {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.bytes[this.pos++];
      result += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return result;
      shift += 7;
    }
  }

  /** A name: its byte length, then UTF-8. */
  str() {
    const n = this.u32();
    const s = this.bytes.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
}

/**
 * The sections of a module, in order: `{ id, start, end }` (`start`: the
 * first byte after the section's id and size). Throws, naming `what`, when
 * the bytes are not a wasm module.
 */
export function sections(bytes, what = 'module') {
  if (bytes.length < 8 || bytes.readUInt32LE(0) !== 0x6d736100) throw new Error(`${what} is not a wasm module`);
  const r = new Reader(bytes, 8);
  const out = [];
  while (r.pos < bytes.length) {
    const id = r.byte();
    const size = r.u32();
    out.push({ id, start: r.pos, end: r.pos + size });
    r.pos += size;
  }
  return out;
}
