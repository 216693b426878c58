#!/usr/bin/env node
// Reads files with parsers that Kaitai Struct's official compiler generates from our schemas,
// and prints what they found: every field's start and end byte offset and its value.
//
// This is the other half of `tests/kaitai_oracle.rs`, which compares the result with
// statepack's own traced decode (see docs/oracle.md). Nothing here knows a format: the
// schema is compiled to JavaScript in debug mode, whose objects carry a `_debug` map with
// `start`/`end` per field and `arr` per list element, and the tree is read from those maps.
//
//   node kaitai_trace.js --version                print the compiler and runtime versions
//   node kaitai_trace.js SCHEMA.ksy FILE...       print each file's tree as JSON
//   node kaitai_trace.js --batch < request.json   answer a request (below) on stdout
//
// A batch request is {"schemas": [{"path": "schema/x.ksy", "files": [{"name": "a",
// "base64": "..."}]}]}. The answer has, per schema, either "compile_error" (the compiler's
// messages) or "files", each with "tree" (on success) or "error" (the parser's message) and
// the partial tree.
//
// Tree nodes: {"name", "start", "end", "value"?, "children"?}. Offsets are absolute from the
// start of the file. Values are typed so that nothing is lost on the way through JSON:
//   {"num": "<16 hex digits>"}   a JavaScript number, as the bit pattern of its double
//   {"str": "..."}               a string
//   {"bytes": "<hex>"}           a byte array
//   {"bool": true|false}         a boolean
// and an enum field adds "enum": the enum value's name in Kaitai's generated code, or null
// when the integer has no entry.

"use strict";

const fs = require("fs");
const path = require("path");
const YAML = require("yaml");
const compiler = require("kaitai-struct-compiler");
const KaitaiStream = require("kaitai-struct/KaitaiStream");

function packageVersion(name) {
  const file = require.resolve(name + "/package.json", { paths: [__dirname] });
  return JSON.parse(fs.readFileSync(file, "utf8")).version;
}

function versions() {
  return {
    node: process.version,
    compiler: compiler.version,
    compiler_package: packageVersion("kaitai-struct-compiler"),
    runtime: packageVersion("kaitai-struct"),
    yaml: packageVersion("yaml"),
  };
}

// `snap_v1_3` -> `SnapV13`, the class name Kaitai gives a type.
function className(id) {
  return id
    .split("_")
    .map((p) => (p.length ? p[0].toUpperCase() + p.slice(1) : p))
    .join("");
}

function describeError(e) {
  if (e === null || e === undefined) return String(e);
  if (typeof e.getMessage === "function") {
    try {
      return String(e.getMessage());
    } catch (_) {
      // fall through to the generic forms
    }
  }
  if (e instanceof Error) return e.message || String(e);
  return String(e);
}

// Compiles one .ksy file to JavaScript in debug mode and loads the generated module.
async function loadSchema(ksyPath) {
  const text = fs.readFileSync(ksyPath, "utf8");
  const ksy = YAML.parse(text, { uniqueKeys: true });
  const importer = {
    importYaml(name) {
      return Promise.reject(new Error("imports are not used by statepack schemas: " + name));
    },
  };
  const files = await compiler.compile("javascript", ksy, importer, true);
  const exportsObj = {};
  for (const [name, code] of Object.entries(files)) {
    const module = { exports: exportsObj };
    // The generated code is a UMD module: give it our `exports` and our `require`, so that
    // `kaitai-struct/KaitaiStream` resolves to the pinned runtime in this folder.
    const fn = new Function("exports", "require", "module", code + "\n//# sourceURL=" + name);
    fn.call(exportsObj, exportsObj, require, module);
  }
  const cls = exportsObj[className(ksy.meta.id)];
  if (typeof cls !== "function") {
    throw new Error(
      "the compiled module has no class " + className(ksy.meta.id) + " (found " +
        Object.keys(exportsObj).join(", ") + ")"
    );
  }
  return { cls, module: exportsObj, files: Object.keys(files) };
}

function hex(bytes) {
  let s = "";
  for (const b of bytes) s += (b < 16 ? "0" : "") + b.toString(16);
  return s;
}

function numberBits(n) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, n);
  return hex(new Uint8Array(view.buffer));
}

function isStruct(v) {
  return v !== null && typeof v === "object" && typeof v._debug === "object";
}

function leafValue(v) {
  if (typeof v === "number") return { num: numberBits(v) };
  if (typeof v === "bigint") return { int: v.toString() };
  if (typeof v === "string") return { str: v };
  if (typeof v === "boolean") return { bool: v };
  if (v instanceof Uint8Array || Array.isArray(v)) return { bytes: hex(v) };
  return { unknown: String(v) };
}

// Looks up a name such as "SnapV13.FrameKind" in the generated module.
function resolveEnum(module, enumName) {
  let obj = module;
  for (const part of String(enumName).split(".")) {
    if (obj === null || obj === undefined) return null;
    obj = obj[part];
  }
  return obj || null;
}

function withEnum(value, raw, enumName, module) {
  if (!enumName) return value;
  const map = resolveEnum(module, enumName);
  const name = map && Object.prototype.hasOwnProperty.call(map, raw) ? map[raw] : null;
  return Object.assign({}, value, { enum: typeof name === "string" ? name : null });
}

// One field or list element: `dbg` is its `_debug` entry, `v` its value.
function node(name, dbg, v, module) {
  const off = dbg.ioOffset || 0;
  const n = { name };
  if (typeof dbg.start === "number") n.start = dbg.start + off;
  if (typeof dbg.end === "number") n.end = dbg.end + off;
  if (Array.isArray(dbg.arr)) {
    n.children = dbg.arr.map((el, i) => node("[" + i + "]", Object.assign({ enumName: dbg.enumName }, el), v ? v[i] : undefined, module));
  } else if (isStruct(v)) {
    n.children = fields(v, module);
  } else if (v !== undefined) {
    n.value = withEnum(leafValue(v), v, dbg.enumName, module);
  }
  return n;
}

// The instance getters of a parsed object's class (Kaitai's generated code defines each
// instance as a getter on the prototype that reads it on first use).
function instanceNames(obj) {
  const proto = Object.getPrototypeOf(obj);
  if (!proto) return [];
  return Object.getOwnPropertyNames(proto).filter((name) => {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    return d && typeof d.get === "function";
  });
}

// Reads every instance of `obj` and of every object below it, so that positional instances
// appear in the `_debug` maps (as `_m_<name>`). An instance that fails is left out here; the
// error of a whole parse is reported by `parse`.
function touchInstances(obj, seen) {
  if (!isStruct(obj) || seen.has(obj)) return;
  seen.add(obj);
  for (const name of instanceNames(obj)) {
    try {
      void obj[name];
    } catch (_) {
      // the partial tree shows what was read
    }
  }
  for (const key of Object.keys(obj._debug)) {
    const v = obj[key];
    if (Array.isArray(v)) v.forEach((el) => touchInstances(el, seen));
    else touchInstances(v, seen);
  }
}

// The fields of a parsed object, in the order they were read (the `_debug` map's order); a
// positional instance (`_m_name` there) is named `name`.
function fields(obj, module) {
  return Object.keys(obj._debug).map((key) =>
    node(key.startsWith("_m_") ? key.slice(3) : key, obj._debug[key], obj[key], module)
  );
}

// The furthest byte of the input that `obj` or anything below it read in the input's own
// stream (sized substreams share the input's buffer; processed bytes have their own, and
// their fields are not followed). The root type ends there, as statepack's reader ends it
// after its furthest positional instance.
function reach(obj, buffer, seen) {
  if (!isStruct(obj) || seen.has(obj) || !obj._io || obj._io.buffer !== buffer) return 0;
  seen.add(obj);
  let hi = 0;
  for (const key of Object.keys(obj._debug)) {
    const dbg = obj._debug[key];
    if (typeof dbg.end === "number") hi = Math.max(hi, dbg.end + (dbg.ioOffset || 0));
    const v = obj[key];
    if (Array.isArray(v)) v.forEach((el) => (hi = Math.max(hi, reach(el, buffer, seen))));
    else hi = Math.max(hi, reach(v, buffer, seen));
  }
  return hi;
}

function parse(loaded, bytes) {
  const buf = new ArrayBuffer(bytes.length);
  new Uint8Array(buf).set(bytes);
  const io = new KaitaiStream(buf, 0);
  const obj = new loaded.cls(io, null, null);
  const root = { name: "<root>", start: 0, size: bytes.length };
  try {
    obj._read();
    root.end = io.pos;
    touchInstances(obj, new Set());
    root.end = Math.max(io.pos, reach(obj, io.buffer, new Set()));
    root.children = fields(obj, loaded.module);
    return { tree: root };
  } catch (e) {
    root.end = io.pos;
    root.children = fields(obj, loaded.module);
    return { error: describeError(e), tree: root };
  }
}

async function batch(request) {
  const out = { versions: versions(), schemas: [] };
  for (const s of request.schemas) {
    const entry = { path: s.path };
    let loaded;
    try {
      loaded = await loadSchema(s.path);
      entry.generated = loaded.files;
    } catch (e) {
      entry.compile_error = describeError(e);
      out.schemas.push(entry);
      continue;
    }
    entry.files = s.files.map((f) => {
      const bytes = Buffer.from(f.base64, "base64");
      return Object.assign({ name: f.name }, parse(loaded, bytes));
    });
    out.schemas.push(entry);
  }
  return out;
}

function readStdin() {
  return fs.readFileSync(0, "utf8");
}

function write(text) {
  // Written synchronously so that a large answer is complete before the process ends.
  let buf = Buffer.from(text, "utf8");
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(1, buf, off);
    } catch (e) {
      if (e.code !== "EAGAIN") throw e;
    }
  }
}

async function main(argv) {
  if (argv[0] === "--version") {
    write(JSON.stringify(versions(), null, 2) + "\n");
    return 0;
  }
  if (argv[0] === "--batch") {
    const answer = await batch(JSON.parse(readStdin()));
    write(JSON.stringify(answer) + "\n");
    return 0;
  }
  if (argv.length >= 2) {
    const request = {
      schemas: [
        {
          path: argv[0],
          files: argv.slice(1).map((p) => ({
            name: path.basename(p),
            base64: fs.readFileSync(p).toString("base64"),
          })),
        },
      ],
    };
    const answer = await batch(request);
    write(JSON.stringify(answer, null, 1) + "\n");
    const s = answer.schemas[0];
    return s.compile_error || s.files.some((f) => f.error) ? 1 : 0;
  }
  process.stderr.write(
    "usage: node kaitai_trace.js --version | --batch < request.json | SCHEMA.ksy FILE...\n"
  );
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write("kaitai_trace: " + describeError(e) + "\n");
    process.exitCode = 1;
  }
);
