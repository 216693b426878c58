-- statepack runtime for Lua 5.1 (readers only), for engines such as Recoil whose Lua has no
-- bit operators, no string.pack and, in the engine, 32-bit float numbers.
--
-- Everything here is arithmetic: bytes come from string.byte, values are assembled with
-- multiplications and additions. Positions count from 1, as Lua's strings and VFS.Unpack*
-- do; the offsets in error messages count from 0, as the Rust readers print them.
--
-- Bytes are fetched through a function the caller gives: fetch(pos, len) returns the string
-- of `len` bytes starting at 1-based `pos` (shorter at the end of the data). A string, a file
-- opened with io.open, or a VFS.LoadFile result all fit (see SP.from_string, SP.from_file).
--
-- Numbers, 32-bit float profile: a float holds every whole number up to 2^24 = 16,777,216
-- exactly, and a larger one only when it is a multiple of a large enough power of two. The
-- readers here never form an intermediate above the value they return; a caller that wants
-- every computed number checked sets SP.check_f32 = true, after which SP.n(x) raises an
-- error for any whole number a 32-bit float would not hold exactly and for any fraction whose
-- magnitude reaches 2^24, and counts the numbers it checked in SP.checked.
--
-- Errors are raised as tables { path = "a.b[3]", offset = n, message = "..." } whose
-- tostring is "a.b[3] (byte offset n): message".

local SP = {}

SP.check_f32 = false
SP.checked = 0

local TWO24 = 16777216

local ErrorMeta = {}
ErrorMeta.__tostring = function(e)
  return e.path .. " (byte offset " .. e.offset .. "): " .. e.message
end

--- True when e is an error raised by this runtime.
function SP.is_error(e)
  return type(e) == "table" and getmetatable(e) == ErrorMeta
end

--- Raises an error naming `path` (a string) and the 0-based byte `offset`.
function SP.fail(path, offset, message)
  error(setmetatable({ path = path, offset = offset, message = message }, ErrorMeta), 0)
end

--- True when x is exact in a 32-bit float: a whole number whose odd part is at most 2^24,
--- or a fraction below 2^24 in magnitude.
function SP.exact_f32(x)
  if x ~= x or x == math.huge or x == -math.huge then
    return false
  end
  local a = math.abs(x)
  if math.floor(a) ~= a then
    return a < TWO24
  end
  while a > TWO24 do
    local h = a / 2
    if math.floor(h) ~= h then
      return false
    end
    a = h
  end
  return true
end

--- Checks one computed number when SP.check_f32 is set (see the top of this file); returns x.
function SP.n(x)
  if SP.check_f32 then
    SP.checked = SP.checked + 1
    if not SP.exact_f32(x) then
      error("number " .. string.format("%.17g", x) .. " is not exact in a 32-bit float", 2)
    end
  end
  return x
end
local N = SP.n

--- A source over a Lua string.
function SP.from_string(s)
  return {
    size = #s,
    fetch = function(pos, len)
      return string.sub(s, pos, pos + len - 1)
    end,
  }
end

--- A source over an open file (io.open(path, "rb")); `size` is found with seek.
function SP.from_file(f)
  local size = f:seek("end")
  return {
    size = size,
    fetch = function(pos, len)
      f:seek("set", pos - 1)
      return f:read(len) or ""
    end,
  }
end

--- A reader over `len` bytes of a source from 1-based `pos`: they are fetched in one call.
--- Errors when the source has fewer bytes.
function SP.reader(src, pos, len, path)
  local bytes = src.fetch(pos, len)
  if #bytes < len then
    SP.fail(path or "<root>", N(pos - 1 + #bytes),
      "input ends early: " .. len .. " byte(s) needed, " .. #bytes .. " left")
  end
  return { s = bytes, at = 1, base = pos - 1, path = path or "<root>" }
end

--- A reader over a whole string (`base` is the 0-based offset of its first byte in the file,
--- used in errors; 0 by default).
function SP.string_reader(s, base, path)
  return { s = s, at = 1, base = base or 0, path = path or "<root>" }
end

local function need(r, n, field)
  if r.at + n - 1 > #r.s then
    SP.fail(r.path .. "." .. field, N(r.base + r.at - 1),
      "input ends early: " .. n .. " byte(s) needed, " .. (#r.s - r.at + 1) .. " left")
  end
end

--- The 0-based offset of the reader's next byte in the file.
function SP.offset(r)
  return N(r.base + r.at - 1)
end

function SP.u8(r, field)
  need(r, 1, field)
  local v = string.byte(r.s, r.at)
  r.at = r.at + 1
  return v
end

function SP.s8(r, field)
  local v = SP.u8(r, field)
  if v >= 128 then v = v - 256 end
  return v
end

function SP.u16le(r, field)
  need(r, 2, field)
  local a, b = string.byte(r.s, r.at, r.at + 1)
  r.at = r.at + 2
  return N(a + b * 256)
end

function SP.s16le(r, field)
  local v = SP.u16le(r, field)
  if v >= 32768 then v = v - 65536 end
  return N(v)
end

--- A u32; in the 32-bit float profile the value must be at most 16,777,215 (or exact).
function SP.u32le(r, field)
  need(r, 4, field)
  local a, b, c, d = string.byte(r.s, r.at, r.at + 3)
  r.at = r.at + 4
  if d == 0 then
    return N((c * 256 + b) * 256 + a)
  end
  return N(((d * 256 + c) * 256 + b) * 256 + a)
end

function SP.s32le(r, field)
  need(r, 4, field)
  local a, b, c, d = string.byte(r.s, r.at, r.at + 3)
  r.at = r.at + 4
  if d >= 128 then
    -- negative: -(complement + 1), built from the complemented bytes
    return N(-((((255 - d) * 256 + (255 - c)) * 256 + (255 - b)) * 256 + (255 - a)) - 1)
  end
  return N(((d * 256 + c) * 256 + b) * 256 + a)
end

--- The f32 of four little-endian bytes a, b, c, d, decoded arithmetically.
function SP.f32_of_bytes(a, b, c, d)
  local sign = 1
  if d >= 128 then
    sign = -1
    d = d - 128
  end
  local exp = d * 2 + math.floor(c / 128)
  local mant = (c % 128) * 65536 + b * 256 + a
  if exp == 0 then
    return sign * math.ldexp(mant, -149)
  elseif exp == 255 then
    if mant == 0 then return sign * math.huge end
    return 0 / 0
  end
  return sign * math.ldexp(mant + 8388608, exp - 150)
end

function SP.f32le(r, field)
  need(r, 4, field)
  local a, b, c, d = string.byte(r.s, r.at, r.at + 3)
  r.at = r.at + 4
  return SP.f32_of_bytes(a, b, c, d)
end

--- `n` bytes as a string.
function SP.bytes(r, n, field)
  need(r, n, field)
  local s = string.sub(r.s, r.at, r.at + n - 1)
  r.at = r.at + n
  return s
end

--- Checks fixed contents (a magic).
function SP.contents(r, expected, field)
  local at = SP.offset(r)
  local got = SP.bytes(r, #expected, field)
  if got ~= expected then
    SP.fail(r.path .. "." .. field, at, "expected " .. expected .. ", found " .. got)
  end
end

-- Column type codes of a columnar chunk and their sizes.
SP.COLUMN_SIZE = { [1] = 1, [2] = 2, [3] = 2, [4] = 4, [5] = 4, [6] = 4 }
local UNPACK = { [1] = "UnpackU8", [2] = "UnpackU16", [3] = "UnpackS16", [4] = "UnpackU32", [5] = "UnpackS32", [6] = "UnpackF32" }
local DECODE = { [1] = SP.u8, [2] = SP.u16le, [3] = SP.s16le, [4] = SP.u32le, [5] = SP.s32le, [6] = SP.f32le }

--- Reads `count` values of type `code` (1 u8, 2 u16, 3 s16, 4 u32, 5 s32, 6 f32) from the
--- string `chunk` at 0-based `offset`, as a table 1..count. With the engine's VFS present (and
--- SP.use_vfs not false) this is one call, VFS.UnpackS16(chunk, offset + 1, count); the
--- engine's quirks are handled: nothing is returned at the last byte, and a table shorter
--- than asked when the string ends early, both reported as an error naming `path`.
function SP.column(chunk, offset, count, code, path)
  local size = SP.COLUMN_SIZE[code]
  if size == nil then
    return nil
  end
  N(offset)
  N(count)
  if count == 0 then
    return {}
  end
  if offset + count * size > #chunk then
    SP.fail(path, offset, "column of " .. count .. " value(s) runs past the end of the chunk (" .. #chunk .. " bytes)")
  end
  if VFS ~= nil and SP.use_vfs ~= false then
    local t = VFS[UNPACK[code]](chunk, offset + 1, count)
    if type(t) ~= "table" or #t ~= count then
      SP.fail(path, offset, "VFS." .. UNPACK[code] .. " returned " .. (type(t) == "table" and #t or "nothing")
        .. " value(s) for " .. count)
    end
    return t
  end
  local r = SP.string_reader(chunk, 0, path)
  r.at = offset + 1
  local out = {}
  local read = DECODE[code]
  for i = 1, count do
    out[i] = read(r, "values")
  end
  return out
end

--- The column directory of an inflated chunk: a table id -> { code, offset, count }. Errors
--- name `path` and the offset of the bad entry.
function SP.directory(chunk, path)
  local r = SP.string_reader(chunk, 0, path)
  local n = SP.u32le(r, "num_columns")
  if n * 12 + 4 > #chunk then
    SP.fail(path .. ".num_columns", 0, "count " .. n .. " needs at least " .. (n * 12) .. " byte(s) but only " .. (#chunk - 4) .. " left")
  end
  local dir = {}
  for i = 0, n - 1 do
    r.path = path .. ".columns[" .. i .. "]"
    local id = SP.u16le(r, "id")
    local code = SP.u16le(r, "type_code")
    local offset = SP.u32le(r, "offset")
    local count = SP.u32le(r, "count")
    dir[id] = { code = code, offset = offset, count = count }
  end
  return dir
end

------------------------------------------------------------------------------------------
-- Generated readers (`statepack-codegen --target lua51`). A generated module takes this
-- runtime and reads through SP.G, whose functions have the names of the Luau runtime's
-- readers (lua/luau/statepack.luau) so both backends compile expressions alike.
--
-- A stream reader (a "cursor") is a table:
--   src    the source it fetches from (nil for a string already in memory: an inflated chunk)
--   s      the bytes fetched so far, a window of the stream; sbase is the 0-based offset of
--          its first byte
--   pos    0-based offset of the next byte; limit: offset of the end of the stream
--   base   offset where the stream starts (`_io.pos` counts from here)
--   path   the path stack of the field being read (names and 0-based list indexes)
--   bits, nbits  the unread bits of a partly read byte
--   root   the cursor of the whole input (with `inflate`, the caller's zlib function, and
--          `lazy`, whether positional instances are read when first used)
-- Errors are SP's error tables plus `kind` (eof, valid, contents, enum, count, range,
-- string, unused, semantic, expr, process, unsupported, endian).

local G = {}
SP.G = G

-- Bytes fetched at a time from a source when a read runs past the window.
G.FETCH = 65536

local TWO32 = 4294967296
local TWO53 = 9007199254740992

--- The dotted text of a path stack: `a.b[3].c`, or `<root>` when empty.
function G.pathString(path)
  if #path == 0 then
    return "<root>"
  end
  local parts = {}
  for i, seg in ipairs(path) do
    if type(seg) == "number" then
      parts[#parts + 1] = "[" .. string.format("%d", seg) .. "]"
    elseif i == 1 then
      parts[#parts + 1] = seg
    else
      parts[#parts + 1] = "." .. seg
    end
  end
  return table.concat(parts)
end

--- Builds an error table (see SP.fail) with `kind`; `field` is appended to `path`.
function G.newError(path, field, offset, kind, message)
  local full = path
  if field ~= nil then
    full = {}
    for i = 1, #path do full[i] = path[i] end
    full[#full + 1] = field
  end
  return setmetatable({ path = G.pathString(full), offset = offset, kind = kind, message = message }, ErrorMeta)
end

--- Raises an error at the cursor's position.
function G.fail(r, field, kind, message)
  error(G.newError(r.path, field, r.pos, kind, message), 0)
end

--- Raises an error at byte `at` (the start of the failing field).
function G.failAt(r, at, field, kind, message)
  error(G.newError(r.path, field, at, kind, message), 0)
end

G.isError = SP.is_error

function G.enter(r, seg)
  r.path[#r.path + 1] = seg
end

function G.leave(r)
  r.path[#r.path] = nil
end

--- A cursor over a whole source (a table from SP.from_string / SP.from_file, or a string).
--- `inflate(z)` turns a zlib stream into its bytes (VFS.ZlibDecompress in the engine); it
--- may be nil when the schema processes nothing. `lazy`: positional instances are read when
--- first used.
function G.reader(src, inflate, lazy)
  if type(src) == "string" then
    src = SP.from_string(src)
  end
  local r = { src = src, s = "", sbase = 0, pos = 0, limit = N(src.size), base = 0, path = {},
    bits = 0, nbits = 0, inflate = inflate, lazy = lazy and true or false }
  r.root = r
  r.grp = G.group(r.limit)
  -- processed fields of the whole file may produce 65,536 bytes plus 1,032 per input byte
  r.processed = { used = 0, total = 65536 + 1032 * r.limit }
  return r
end

--- The budgets of positional instances over one byte buffer (the file, or an inflated
--- chunk), as the Rust reader keeps them: at most 1,024 + 16 per byte instance reads, their
--- bytes at most 65,536 + 16 per byte in all, nested at most 64 deep.
function G.group(len)
  return { len = len, reads = 0, bytes = 0, depth = 0 }
end

-- Makes bytes pos .. pos + n - 1 of the stream available in r.s (the caller checked the
-- limit), fetching from the source when they are outside the window.
local function window(r, n)
  local i = r.pos - r.sbase
  if i >= 0 and i + n <= #r.s then
    return i + 1
  end
  local len = n
  if len < G.FETCH then len = G.FETCH end
  if r.pos + len > r.limit then len = r.limit - r.pos end
  local got = r.src.fetch(r.pos + 1, len)
  if #got < n then
    G.fail(r, nil, "eof", "the source gave " .. #got .. " byte(s) of " .. n .. " asked at byte " .. r.pos)
  end
  r.s = got
  r.sbase = r.pos
  return 1
end

local function need(r, n, field)
  if r.nbits ~= 0 then
    r.bits = 0
    r.nbits = 0
  end
  local left = r.limit - r.pos
  if n > left then
    G.fail(r, field, "eof", "input ends early: " .. n .. " byte(s) needed, " .. left .. " left")
  end
  if n == 0 then
    return r.pos - r.sbase + 1
  end
  return window(r, n)
end
G.need = need

function G.remaining(r)
  return r.limit - r.pos
end

function G.u8(r, field)
  local i = need(r, 1, field)
  r.pos = r.pos + 1
  return string.byte(r.s, i)
end

function G.s8(r, field)
  local v = G.u8(r, field)
  if v >= 128 then v = v - 256 end
  return v
end

function G.u16le(r, field)
  local i = need(r, 2, field)
  local a, b = string.byte(r.s, i, i + 1)
  r.pos = r.pos + 2
  return a + b * 256
end

function G.s16le(r, field)
  local v = G.u16le(r, field)
  if v >= 32768 then v = v - 65536 end
  return v
end

function G.u16be(r, field)
  local i = need(r, 2, field)
  local a, b = string.byte(r.s, i, i + 1)
  r.pos = r.pos + 2
  return a * 256 + b
end

function G.s16be(r, field)
  local v = G.u16be(r, field)
  if v >= 32768 then v = v - 65536 end
  return v
end

-- A u32 from bytes a (lowest) .. d: never an intermediate above the value.
local function u32of(a, b, c, d)
  if d == 0 then
    return N((c * 256 + b) * 256 + a)
  end
  return N(((d * 256 + c) * 256 + b) * 256 + a)
end

local function s32of(a, b, c, d)
  if d >= 128 then
    return N(-((((255 - d) * 256 + (255 - c)) * 256 + (255 - b)) * 256 + (255 - a)) - 1)
  end
  return N(((d * 256 + c) * 256 + b) * 256 + a)
end

function G.u32le(r, field)
  local i = need(r, 4, field)
  local a, b, c, d = string.byte(r.s, i, i + 3)
  r.pos = r.pos + 4
  return u32of(a, b, c, d)
end

function G.s32le(r, field)
  local i = need(r, 4, field)
  local a, b, c, d = string.byte(r.s, i, i + 3)
  r.pos = r.pos + 4
  return s32of(a, b, c, d)
end

function G.u32be(r, field)
  local i = need(r, 4, field)
  local a, b, c, d = string.byte(r.s, i, i + 3)
  r.pos = r.pos + 4
  return u32of(d, c, b, a)
end

function G.s32be(r, field)
  local i = need(r, 4, field)
  local a, b, c, d = string.byte(r.s, i, i + 3)
  r.pos = r.pos + 4
  return s32of(d, c, b, a)
end

local function u64value(r, field, at, hi, lo)
  if hi >= 2097152 then -- 2^21: hi * 2^32 would reach 2^53
    G.failAt(r, at, field, "range", "u64 with high word " .. hi .. " does not fit a double exactly")
  end
  return hi * TWO32 + lo
end

local function s64value(r, field, at, hi, lo)
  if hi >= 2147483648 then
    local nhi, nlo = 4294967295 - hi, TWO32 - lo
    if nlo == TWO32 then
      nlo = 0
      nhi = nhi + 1
    end
    if nhi > 2097152 or (nhi == 2097152 and nlo > 0) then
      G.failAt(r, at, field, "range", "s64 does not fit a double exactly")
    end
    return -(nhi * TWO32 + nlo)
  end
  return u64value(r, field, at, hi, lo)
end

function G.u64le(r, field)
  local at = r.pos
  local lo = G.u32le(r, field)
  return u64value(r, field, at, G.u32le(r, field), lo)
end

function G.s64le(r, field)
  local at = r.pos
  local lo = G.u32le(r, field)
  return s64value(r, field, at, G.u32le(r, field), lo)
end

function G.u64be(r, field)
  local at = r.pos
  local hi = G.u32be(r, field)
  return u64value(r, field, at, hi, G.u32be(r, field))
end

function G.s64be(r, field)
  local at = r.pos
  local hi = G.u32be(r, field)
  return s64value(r, field, at, hi, G.u32be(r, field))
end

function G.f32le(r, field)
  local i = need(r, 4, field)
  local a, b, c, d = string.byte(r.s, i, i + 3)
  r.pos = r.pos + 4
  return SP.f32_of_bytes(a, b, c, d)
end

function G.f32be(r, field)
  local i = need(r, 4, field)
  local a, b, c, d = string.byte(r.s, i, i + 3)
  r.pos = r.pos + 4
  return SP.f32_of_bytes(d, c, b, a)
end

--- The f64 of eight bytes, least significant first.
local function f64of(b)
  local sign = 1
  local hi = b[8]
  if hi >= 128 then
    sign = -1
    hi = hi - 128
  end
  local exp = hi * 16 + math.floor(b[7] / 16)
  local mant = (b[7] % 16)
  for k = 6, 1, -1 do
    mant = mant * 256 + b[k]
  end
  if exp == 0 then
    return sign * math.ldexp(mant, -1074)
  elseif exp == 2047 then
    if mant == 0 then return sign * math.huge end
    return 0 / 0
  end
  return sign * math.ldexp(mant + 4503599627370496, exp - 1075)
end

function G.f64le(r, field)
  local i = need(r, 8, field)
  local b = { string.byte(r.s, i, i + 7) }
  r.pos = r.pos + 8
  return f64of(b)
end

function G.f64be(r, field)
  local i = need(r, 8, field)
  local a = { string.byte(r.s, i, i + 7) }
  r.pos = r.pos + 8
  return f64of({ a[8], a[7], a[6], a[5], a[4], a[3], a[2], a[1] })
end

--- `n` bytes as a string.
function G.bytes(r, n, field)
  if type(n) ~= "number" or n < 0 or math.floor(n) ~= n then
    G.fail(r, field, "range", "length " .. tostring(n) .. " is not a byte count")
  end
  local i = need(r, n, field)
  r.pos = r.pos + n
  return string.sub(r.s, i, i + n - 1)
end

function G.contents(r, expected, field)
  local at = r.pos
  local got = G.bytes(r, #expected, field)
  if got ~= expected then
    G.failAt(r, at, field, "contents", "expected " .. G.show(expected) .. ", found " .. G.show(got))
  end
end

--- Refuses before a list is read a count whose items (at least `minSize` bytes each) cannot
--- fit in what is left.
function G.checkCount(r, count, minSize, field)
  local left = r.limit - r.pos
  if count < 0 or count * minSize > left then
    G.fail(r, field, "count", "count " .. count .. " needs at least " .. (count * minSize) .. " byte(s) but only " .. left .. " left")
  end
end

function G.checkCountBits(r, count, width, field)
  local left = (r.limit - r.pos) * 8 + r.nbits
  if count < 0 or count * width > left then
    G.fail(r, field, "count", "count " .. count .. " needs " .. (count * width) .. " bit(s) but only " .. left .. " left")
  end
end

--- An unsigned bit field of `n` bits (1..32), most significant bit first, by arithmetic.
function G.bitsBe(r, n, field)
  local bits, nbits = r.bits, r.nbits
  if n > nbits then
    local more = math.ceil((n - nbits) / 8)
    if more > r.limit - r.pos then
      G.fail(r, field, "eof", "input ends early: " .. more .. " byte(s) needed, " .. (r.limit - r.pos) .. " left")
    end
    local i = window(r, more)
    for k = 0, more - 1 do
      bits = bits * 256 + string.byte(r.s, i + k)
    end
    r.pos = r.pos + more
    nbits = nbits + more * 8
  end
  local rest = nbits - n
  local scale = 2 ^ rest
  local v = math.floor(bits / scale)
  r.bits = bits - v * scale
  r.nbits = rest
  return v
end

--- An unsigned bit field of `n` bits (1..32), least significant bit first.
function G.bitsLe(r, n, field)
  local bits, nbits = r.bits, r.nbits
  if n > nbits then
    local more = math.ceil((n - nbits) / 8)
    if more > r.limit - r.pos then
      G.fail(r, field, "eof", "input ends early: " .. more .. " byte(s) needed, " .. (r.limit - r.pos) .. " left")
    end
    local i = window(r, more)
    for k = 0, more - 1 do
      bits = bits + string.byte(r.s, i + k) * 2 ^ nbits
      nbits = nbits + 8
    end
    r.pos = r.pos + more
  end
  local scale = 2 ^ n
  local high = math.floor(bits / scale)
  local v = bits - high * scale
  r.bits = high
  r.nbits = nbits - n
  return v
end

function G.bitsBeWide(r, n, field)
  local hi = G.bitsBe(r, n - 32, field)
  return hi * TWO32 + G.bitsBe(r, 32, field)
end

function G.bitsLeWide(r, n, field)
  local lo = G.bitsLe(r, 32, field)
  return G.bitsLe(r, n - 32, field) * TWO32 + lo
end

local function leb(r, field, bitsOf)
  local at = r.pos
  local v, scale = 0, 1
  for k = 1, 8 do
    local b = bitsOf(r, field)
    local group = b % 128
    if k > 1 and b == 0 then
      G.failAt(r, at, field, "range", "LEB128 varint is not in its shortest form")
    end
    v = v + group * scale
    if b < 128 then
      if v >= TWO53 then
        G.failAt(r, at, field, "range", "LEB128 varint does not fit a double exactly")
      end
      return v
    end
    scale = scale * 128
  end
  G.failAt(r, at, field, "range", "LEB128 varint longer than 8 groups does not fit a double exactly")
end

--- An unsigned LEB128 varint, at most 2^53 - 1, shortest form only.
function G.uleb128(r, field)
  return leb(r, field, G.u8)
end

--- As uleb128 with 8-bit bit fields as groups.
function G.uleb128Bits(r, field)
  return leb(r, field, function(rr, f) return G.bitsBe(rr, 8, f) end)
end

--- A short text for a value in an error message.
function G.show(v)
  if type(v) == "string" then
    return string.format("%q", v)
  elseif type(v) == "number" and v == math.floor(v) and math.abs(v) < TWO53 then
    return string.format("%.0f", v)
  end
  return tostring(v)
end

--- The value f() returns, or nil when it raises an error.
function G.try(f)
  local ok, v = pcall(f)
  if ok then
    return v
  end
  return nil
end

--- `c and x or y` for a value that may be nil or false: the generated code writes
--- `((c) and {x} or {y})[1]`; this is its function form.
function G.ite(c, x, y)
  if c then return x end
  return y
end

local function copy_path(path)
  local p = {}
  for i = 1, #path do p[i] = path[i] end
  return p
end

local function child(r, fields)
  fields.root = r.root or r
  fields.grp = fields.grp or r.grp
  fields.bits = 0
  fields.nbits = 0
  return fields
end

--- A substream of the next `n` bytes (a sized field); positions still count from the start
--- of the parent's stream; the parent moves past them.
function G.sub(r, n, field)
  if type(n) ~= "number" or n < 0 or math.floor(n) ~= n then
    G.fail(r, field, "range", "size " .. tostring(n) .. " is not a byte count")
  end
  need(r, 0, field)
  if n > r.limit - r.pos then
    G.fail(r, field, "eof", "input ends early: " .. n .. " byte(s) needed, " .. (r.limit - r.pos) .. " left")
  end
  local s = child(r, { src = r.src, s = r.s, sbase = r.sbase, pos = r.pos, limit = r.pos + n,
    base = r.pos, path = r.path })
  r.pos = r.pos + n
  return s
end

--- A stream over the bytes of a string (processed or terminated field), sharing r's path.
function G.subOver(r, s)
  return child(r, { src = nil, s = s, sbase = 0, pos = 0, limit = #s, base = 0, path = r.path,
    grp = G.group(#s) })
end

--- A second cursor on r's stream (for a positional instance), with a copy of the path.
function G.view(r)
  return child(r, { src = r.src, s = r.s, sbase = r.sbase, pos = r.pos, limit = r.limit,
    base = r.base, path = copy_path(r.path) })
end

--- A cursor on the whole input (`io: _root._io`), at its start, with a copy of the path.
function G.rootOf(r)
  local root = r.root or r
  return child(r, { src = root.src, s = root.s, sbase = root.sbase, pos = root.base,
    limit = root.limit, base = root.base, path = copy_path(r.path) })
end

--- After the value `v` was read from the sized substream `sub`: `v.__io` keeps where the
--- substream's bytes are (nothing is copied until an instance reads them).
function G.keepStream(sub, v)
  if type(v) == "table" then
    v.__io = { src = sub.src, s = sub.s, sbase = sub.sbase, base = sub.base, limit = sub.limit }
  end
end

--- A cursor over the substream the value `x` was read from (`io: X._io`, `io` its text), at
--- its start, with a copy of r's path; positions count from the substream's start. The
--- substream's bytes are fetched once and kept with `x`, and so are the budgets of the
--- instances read in it (see G.group). Errors: `semantic` at r's position when `x` was not
--- read in a substream of its own (no value, or not a sized one).
function G.foreignStream(r, x, io, field)
  local s = nil
  if type(x) == "table" then s = x.__io end
  if type(s) ~= "table" then
    G.fail(r, field, "semantic", "`" .. io .. "` was not read in a substream of its own (no `size` or `process`), so it has no `_io` to read from")
  end
  if s.own == nil then
    local n = s.limit - s.base
    local c = child(r, { src = s.src, s = s.s, sbase = s.sbase, pos = s.base, limit = s.limit,
      base = s.base, path = r.path })
    local i = need(c, n, field)
    s.own = string.sub(c.s, i, i + n - 1)
    s.grp = G.group(n)
  end
  return child(r, { src = nil, s = s.own, sbase = 0, pos = 0, limit = #s.own, base = 0,
    path = copy_path(r.path), grp = s.grp })
end

--- Moves to byte `pos` of the stream (counted from its start).
function G.seekRel(r, pos, field)
  if type(pos) ~= "number" or pos < 0 or r.base + pos > r.limit then
    -- named at the end of the stream (its start for a negative position), as the Rust
    -- reader names a seek outside it
    local at = r.limit
    if type(pos) == "number" and pos < 0 then at = r.base end
    G.failAt(r, at, field, "eof", "input ends early: position " .. tostring(pos) .. " lies past the end of the stream (" .. (r.limit - r.base) .. " bytes)")
  end
  r.pos = N(r.base + pos)
  r.bits = 0
  r.nbits = 0
end

--- Starts reading a positional instance at the cursor's position (after G.seekRel):
--- refuses it, at that position, past the buffer's budgets (see G.group); returns where it
--- starts, for G.leaveInstance.
function G.enterInstance(r, field)
  local g = r.grp
  local at = r.pos
  if g.depth >= 64 then
    G.failAt(r, at, field, "semantic", "positional instances nest more than 64 deep (does one point back at itself?)")
  end
  if g.bytes > 65536 + 16 * g.len then
    G.failAt(r, at, field, "semantic", "positional instances read more than " .. (65536 + 16 * g.len)
      .. " bytes of an input of " .. g.len .. " byte(s) (do they overlap?)")
  end
  g.reads = g.reads + 1
  if g.reads > 1024 + 16 * g.len then
    G.failAt(r, at, field, "semantic", "more than " .. (1024 + 16 * g.len) .. " positional instance reads for an input of "
      .. g.len .. " byte(s) (do instances point back at each other?)")
  end
  g.depth = g.depth + 1
  return at
end

--- Ends a positional instance started at byte `at`: counts the bytes it read.
function G.leaveInstance(r, at)
  local g = r.grp
  if r.pos > at then g.bytes = g.bytes + (r.pos - at) end
  g.depth = g.depth - 1
end

--- A sized type must read its whole size (strict rules).
function G.finishSub(r)
  if r.pos < r.limit then
    G.fail(r, nil, "unused", (r.limit - r.pos) .. " byte(s) of a sized value left unread")
  end
end

function G.bitPos(r)
  return r.pos * 8 - r.nbits
end

function G.isEof(r)
  return r.pos >= r.limit and r.nbits == 0
end

--- Before a byte-aligned field after bit fields (strict rules): the unread bits must be zero.
function G.alignStrict(r, field)
  if r.nbits ~= 0 then
    local pad = r.bits
    r.bits = 0
    r.nbits = 0
    if pad ~= 0 then
      G.failAt(r, r.pos - 1, field, "semantic", "padding bits to the byte boundary are not zero")
    end
  end
end

--- The inflated bytes of zlib stream `z` (a `process: zlib` field read from byte `at`),
--- through the function the caller gave; errors name the field.
function G.inflate(r, z, at, field)
  local f = (r.root or r).inflate
  if f == nil then
    G.failAt(r, at, field, "unsupported", "process: zlib needs an inflate function (pass VFS.ZlibDecompress)")
  end
  local ok, out = pcall(f, z)
  if not ok or type(out) ~= "string" then
    G.failAt(r, at, field, "process", "chunk does not decompress: " .. tostring(out))
  end
  N(#out)
  local p = (r.root or r).processed
  if p ~= nil then
    p.used = p.used + #out
    if p.used > p.total then
      G.failAt(r, at, field, "semantic", "processed fields produced more than " .. p.total
        .. " bytes for one file, its budget of 65,536 plus 1,032 per input byte")
    end
  end
  return out
end

-- Terminated and padded values.
function G.readTerm(r, n, term, include, consume, eosError, pad, field)
  if n ~= nil then
    local s = G.bytes(r, n, field)
    local at = nil
    if term ~= nil then at = string.find(s, string.char(term), 1, true) end
    if at ~= nil then
      if include then return string.sub(s, 1, at) end
      return string.sub(s, 1, at - 1)
    end
    if pad ~= nil then
      local e = #s
      while e > 0 and string.byte(s, e) == pad do e = e - 1 end
      s = string.sub(s, 1, e)
    end
    return s
  end
  need(r, 0, field)
  local start = r.pos
  local parts = {}
  while r.pos < r.limit do
    local len = r.limit - r.pos
    if len > G.FETCH then len = G.FETCH end
    local i = window(r, len)
    local j = string.find(r.s, string.char(term), i, true)
    if j ~= nil and j < i + len then
      local upto = j - i -- bytes before the terminator
      local keep = upto
      if include then keep = upto + 1 end
      parts[#parts + 1] = string.sub(r.s, i, i + keep - 1)
      r.pos = r.pos + upto
      if consume then r.pos = r.pos + 1 end
      return table.concat(parts)
    end
    parts[#parts + 1] = string.sub(r.s, i, i + len - 1)
    r.pos = r.pos + len
  end
  if eosError then
    r.pos = start
    G.fail(r, field, "eof", "no terminator " .. tostring(term) .. " before the end")
  end
  return table.concat(parts)
end

function G.readTerm2(r, n, include, consume, eosError, pad, field)
  if n ~= nil then
    local s = G.bytes(r, n, field)
    for i = 1, #s - 1, 2 do
      if string.byte(s, i) == 0 and string.byte(s, i + 1) == 0 then
        if include then return string.sub(s, 1, i + 1) end
        return string.sub(s, 1, i - 1)
      end
    end
    if pad ~= nil then
      local e = #s
      while e > 0 and string.byte(s, e) == pad do e = e - 1 end
      s = string.sub(s, 1, e)
    end
    return s
  end
  need(r, 0, field)
  local start = r.pos
  local rest = G.bytes(r, r.limit - r.pos, field)
  r.pos = start
  for i = 1, #rest - 1, 2 do
    if string.byte(rest, i) == 0 and string.byte(rest, i + 1) == 0 then
      local keep = i - 1
      if include then keep = i + 1 end
      r.pos = start + i - 1
      if consume then r.pos = r.pos + 2 end
      return string.sub(rest, 1, keep)
    end
  end
  if eosError then
    G.fail(r, field, "eof", "no two-byte terminator before the end")
  end
  r.pos = r.limit
  return rest
end

-- UTF-8 without a utf8 library: the code points of s, or nil and the 1-based index of the
-- first byte that is not valid UTF-8 (overlong forms, surrogates and values above U+10FFFF
-- are refused, as Rust refuses them).
local function utf8_codes(s)
  local out = {}
  local i, n = 1, #s
  while i <= n do
    local c = string.byte(s, i)
    local len, cp, min
    if c < 128 then
      len, cp, min = 1, c, 0
    elseif c >= 194 and c <= 223 then
      len, cp, min = 2, c - 192, 128
    elseif c >= 224 and c <= 239 then
      len, cp, min = 3, c - 224, 2048
    elseif c >= 240 and c <= 244 then
      len, cp, min = 4, c - 240, 65536
    else
      return nil, i
    end
    if i + len - 1 > n then
      return nil, i
    end
    for k = 1, len - 1 do
      local d = string.byte(s, i + k)
      if d < 128 or d > 191 then
        return nil, i
      end
      cp = cp * 64 + (d - 128)
    end
    if cp < min or cp > 1114111 or (cp >= 55296 and cp <= 57343) then
      return nil, i
    end
    out[#out + 1] = cp
    i = i + len
  end
  return out
end
G.utf8_codes = utf8_codes

local function utf8_char(cp)
  if cp < 128 then
    return string.char(cp)
  elseif cp < 2048 then
    return string.char(192 + math.floor(cp / 64), 128 + cp % 64)
  elseif cp < 65536 then
    return string.char(224 + math.floor(cp / 4096), 128 + math.floor(cp / 64) % 64, 128 + cp % 64)
  end
  return string.char(240 + math.floor(cp / 262144), 128 + math.floor(cp / 4096) % 64,
    128 + math.floor(cp / 64) % 64, 128 + cp % 64)
end
G.utf8_char = utf8_char

local function decodeUtf16(s, le)
  if #s % 2 ~= 0 then
    return nil, "odd length " .. #s .. " for UTF-16"
  end
  local out = {}
  local i = 1
  while i <= #s do
    local a, b = string.byte(s, i, i + 1)
    local u = le and (a + b * 256) or (a * 256 + b)
    i = i + 2
    if u >= 55296 and u <= 56319 then
      if i > #s then return nil, "unpaired surrogate" end
      local c, d = string.byte(s, i, i + 1)
      local u2 = le and (c + d * 256) or (c * 256 + d)
      if u2 < 56320 or u2 > 57343 then return nil, "unpaired surrogate" end
      i = i + 2
      u = 65536 + (u - 55296) * 1024 + (u2 - 56320)
    elseif u >= 56320 and u <= 57343 then
      return nil, "unpaired surrogate"
    end
    out[#out + 1] = utf8_char(u)
  end
  return table.concat(out)
end

--- Checks that s is valid text in `enc` and returns it as UTF-8 (errors at byte `at`).
function G.checkText(r, at, field, s, enc)
  if enc == "UTF-16LE" or enc == "UTF-16BE" then
    local t, why = decodeUtf16(s, enc == "UTF-16LE")
    if t == nil then
      G.failAt(r, at, field, "string", "not valid " .. enc .. ": " .. why)
    end
    return t
  elseif enc == "ISO-8859-1" then
    local out = {}
    for i = 1, #s do out[i] = utf8_char(string.byte(s, i)) end
    return table.concat(out)
  end
  local cps, bad = utf8_codes(s)
  if cps == nil then
    G.failAt(r, at, field, "string", "not valid " .. enc .. ": invalid byte at offset " .. (at + bad - 1))
  end
  return s
end

--- Bytes xor-ed with `key` (a string, repeated), by arithmetic.
function G.xorBytes(s, key)
  local k = #key
  if k == 0 then return s end
  local out = {}
  for i = 1, #s do
    out[i] = string.char(G.band8x(string.byte(s, i), string.byte(key, (i - 1) % k + 1)))
  end
  return table.concat(out)
end

-- xor of two bytes
function G.band8x(a, b)
  local v, bit = 0, 1
  for _ = 1, 8 do
    local x, y = a % 2, b % 2
    if x ~= y then v = v + bit end
    a, b, bit = (a - x) / 2, (b - y) / 2, bit * 2
  end
  return v
end

--- Every byte rotated left by n bits (right when n is negative).
function G.rotateBytes(s, n)
  local k = n % 8
  local out = {}
  local p = 2 ^ k
  for i = 1, #s do
    local x = string.byte(s, i) * p
    out[i] = string.char(x % 256 + math.floor(x / 256))
  end
  return table.concat(out)
end

function G.sumOf(list, field)
  local sum = 0
  for _, e in ipairs(list or {}) do
    sum = sum + (e[field] or 0)
  end
  return sum
end

--- A positional instance read when first used: `load()` stores it into v.
function G.later(v, name, load)
  local mt = getmetatable(v)
  if mt == nil then
    mt = { loaders = {} }
    mt.__index = function(t, k)
      local f = mt.loaders[k]
      if f ~= nil then
        mt.loaders[k] = nil
        f()
        return rawget(t, k)
      end
      return nil
    end
    setmetatable(v, mt)
  end
  mt.loaders[name] = load
end

--- Reads every positional instance not read yet, in the whole value (for a lazily opened
--- file, to compare or print it).
function G.force(v, seen)
  seen = seen or {}
  if type(v) ~= "table" or seen[v] then return v end
  seen[v] = true
  local mt = getmetatable(v)
  if mt ~= nil and mt.loaders ~= nil then
    local names = {}
    for k in pairs(mt.loaders) do names[#names + 1] = k end
    table.sort(names)
    for _, k in ipairs(names) do local _ = v[k] end
  end
  for _, x in pairs(v) do G.force(x, seen) end
  return v
end

-- Columns: `count` fixed-width little-endian numbers in one call.
local VFS_OF = { u8 = "UnpackU8", s8 = "UnpackS8", u16le = "UnpackU16", s16le = "UnpackS16",
  u32le = "UnpackU32", s32le = "UnpackS32", f32le = "UnpackF32" }
local WIDTH = { u8 = 1, s8 = 1, u16le = 2, s16le = 2, u32le = 4, s32le = 4, f32le = 4 }

--- Reads a list of `n` numbers of type `ty` (u8 s8 u16le s16le u32le s32le f32le) as a table
--- 1..n: with the engine's VFS (and SP.use_vfs not false) one VFS.Unpack* call from the
--- 1-based position of the first byte in the fetched window; else by arithmetic.
function G.column(r, n, ty, field)
  local w = WIDTH[ty]
  G.checkCount(r, n, w, field)
  if n == 0 then
    need(r, 0, field)
    return {}
  end
  local i = need(r, n * w, field)
  local out
  -- VFS.Unpack* returns nothing when the position is the last byte of the string.
  if VFS ~= nil and SP.use_vfs ~= false and i < #r.s then
    out = VFS[VFS_OF[ty]](r.s, i, n)
    if type(out) ~= "table" or #out ~= n then
      G.fail(r, field, "eof", "VFS." .. VFS_OF[ty] .. " gave " .. (type(out) == "table" and #out or "nothing") .. " value(s) for " .. n)
    end
  else
    -- The bytes are in r.s from i on (need made them so): one loop per type.
    out = {}
    local s, byte, j = r.s, string.byte, i
    if ty == "u8" then
      for k = 1, n do out[k] = byte(s, j); j = j + 1 end
    elseif ty == "s8" then
      for k = 1, n do
        local a = byte(s, j)
        if a >= 128 then a = a - 256 end
        out[k] = a
        j = j + 1
      end
    elseif ty == "u16le" then
      for k = 1, n do
        local a, b = byte(s, j, j + 1)
        out[k] = a + b * 256
        j = j + 2
      end
    elseif ty == "s16le" then
      for k = 1, n do
        local a, b = byte(s, j, j + 1)
        local v = a + b * 256
        if v >= 32768 then v = v - 65536 end
        out[k] = v
        j = j + 2
      end
    elseif ty == "u32le" then
      for k = 1, n do out[k] = u32of(byte(s, j, j + 3)); j = j + 4 end
    elseif ty == "s32le" then
      for k = 1, n do out[k] = s32of(byte(s, j, j + 3)); j = j + 4 end
    else
      local f32 = SP.f32_of_bytes
      for k = 1, n do out[k] = f32(byte(s, j, j + 3)); j = j + 4 end
    end
  end
  r.pos = r.pos + n * w
  return out
end

--- After a column was read from byte `at`: every value within lo..hi (nil: no bound), else
--- an error naming the element and its byte.
function G.checkColumn(r, list, at, w, lo, hi, field, rule)
  for k = 1, #list do
    local x = list[k]
    if (lo ~= nil and x < lo) or (hi ~= nil and x > hi) then
      r.path[#r.path + 1] = field
      r.path[#r.path + 1] = k - 1
      local e = G.newError(r.path, nil, at + (k - 1) * w, "valid", G.show(x) .. " " .. rule)
      r.path[#r.path] = nil
      r.path[#r.path] = nil
      error(e, 0)
    end
  end
end

------------------------------------------------------------------------------------------
-- Expression helpers: the operators of the schema language (docs/schema-language.md, "One
-- semantics"), by arithmetic. Integers are doubles in stock Lua 5.1, exact up to 2^53.

local function exprError(message)
  error(G.newError({}, nil, 0, "expr", message), 0)
end

function G.idiv(a, b)
  if b == 0 then exprError("division by zero") end
  return math.floor(a / b)
end

function G.imod(a, b)
  if b == 0 then exprError("division by zero") end
  return a - b * math.floor(a / b)
end

function G.fmod(a, b)
  if b == 0 or a ~= a or b ~= b or a == math.huge or a == -math.huge then
    return 0 / 0
  end
  if b == math.huge or b == -math.huge then
    if (a >= 0) == (b > 0) then return a end
    return b
  end
  return a - b * math.floor(a / b)
end

-- Bitwise operators on two's complement integers up to 2^53: the two 32-bit halves (the
-- high one taken modulo 2^32, so a negative number is its two's complement), bit by bit.
local function bit32op(a, b, f)
  local v, bit = 0, 1
  for _ = 1, 32 do
    local x, y = a % 2, b % 2
    if f(x, y) then v = v + bit end
    a, b, bit = (a - x) / 2, (b - y) / 2, bit * 2
  end
  return v
end

local function bitop(a, b, f)
  local al, bl = a % TWO32, b % TWO32
  local ah, bh = ((a - al) / TWO32) % TWO32, ((b - bl) / TWO32) % TWO32
  local hi = bit32op(ah, bh, f)
  if hi >= 2147483648 then hi = hi - TWO32 end
  return hi * TWO32 + bit32op(al, bl, f)
end

function G.band(a, b)
  return bitop(a, b, function(x, y) return x == 1 and y == 1 end)
end

function G.bor(a, b)
  return bitop(a, b, function(x, y) return x == 1 or y == 1 end)
end

function G.bxor(a, b)
  return bitop(a, b, function(x, y) return x ~= y end)
end

function G.shl(a, n)
  if n < 0 or n > 63 then exprError("shift amount " .. n .. " outside 0..63") end
  return a * 2 ^ n
end

function G.shr(a, n)
  if n < 0 or n > 63 then exprError("shift amount " .. n .. " outside 0..63") end
  return math.floor(a / 2 ^ n)
end

function G.toInt(x)
  if x ~= x then return 0 end
  if x < 0 then return math.ceil(x) end
  return math.floor(x)
end

function G.intToStr(x)
  return string.format("%.0f", x)
end

function G.strLen(s)
  local cps = utf8_codes(s)
  if cps == nil then return #s end
  return #cps
end

function G.strReverse(s)
  local cps = utf8_codes(s) or {}
  local out = {}
  for i = #cps, 1, -1 do out[#out + 1] = utf8_char(cps[i]) end
  return table.concat(out)
end

function G.substring(s, from, to)
  local cps = utf8_codes(s) or {}
  local n = #cps
  if from < 0 or to < from or to > n then
    exprError("substring(" .. from .. ", " .. to .. ") of a string of " .. n .. " character(s)")
  end
  local out = {}
  for i = from + 1, to do out[#out + 1] = utf8_char(cps[i]) end
  return table.concat(out)
end

function G.strToInt(s, radix)
  local v = nil
  if string.match(s, "^[+-]?%w+$") then
    local sign, digits = 1, s
    local c = string.sub(s, 1, 1)
    if c == "-" or c == "+" then
      digits = string.sub(s, 2)
      if c == "-" then sign = -1 end
    end
    local n = tonumber(digits, radix)
    if n ~= nil then v = sign * n end
  end
  if v == nil or math.floor(v) ~= v then
    exprError('"' .. s .. '" is not an integer in radix ' .. radix)
  end
  return v
end

function G.decodeText(s, enc)
  if utf8_codes(s) == nil then
    exprError("bytes are not valid " .. enc)
  end
  return s
end

function G.at(list, i)
  if i < 0 or i >= #list or math.floor(i) ~= i then
    exprError("index " .. i .. " out of range for a list of " .. #list)
  end
  return list[i + 1]
end

function G.byteAt(s, i)
  if i < 0 or i >= #s or math.floor(i) ~= i then
    exprError("index " .. i .. " out of range for " .. #s .. " byte(s)")
  end
  return string.byte(s, i + 1)
end

function G.listMin(list)
  if #list == 0 then exprError("min of an empty list") end
  local m = list[1]
  for i = 2, #list do
    if list[i] < m or m ~= m then m = list[i] end
  end
  return m
end

function G.listMax(list)
  if #list == 0 then exprError("max of an empty list") end
  local m = list[1]
  for i = 2, #list do
    if list[i] > m or m ~= m then m = list[i] end
  end
  return m
end

function G.bytesMin(s)
  if #s == 0 then exprError("min of no bytes") end
  local m = 255
  for i = 1, #s do
    local b = string.byte(s, i)
    if b < m then m = b end
  end
  return m
end

function G.bytesMax(s)
  if #s == 0 then exprError("max of no bytes") end
  local m = 0
  for i = 1, #s do
    local b = string.byte(s, i)
    if b > m then m = b end
  end
  return m
end

function G.listToBytes(list)
  local out = {}
  for i, x in ipairs(list) do out[i] = string.char(x % 256) end
  return table.concat(out)
end

return SP
