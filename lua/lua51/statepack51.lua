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

return SP
