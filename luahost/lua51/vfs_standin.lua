-- Stand-ins for the engine's VFS calls that the Lua 5.1 modules use, with the engine's
-- behaviour kept (test-only; inside the engine the real VFS is used):
--
-- * VFS.UnpackU8/U16/U32/S8/S16/S32/F32(s, pos, count): little-endian values of a fixed
--   width from 1-based `pos`. Nothing is returned when `pos` is the last byte of the string
--   or beyond it, or below 1. Without a count one value is returned; with a count, a table of
--   that many values, cut short to the whole values left in the string.
-- * VFS.ZlibDecompress(z): the inflated bytes of one zlib stream. The host has no zlib in
--   Lua 5.1, so the test that runs this file inflates every chunk of the track in Rust first
--   and hands the pairs over in a side file (see VFS_STANDIN.load_inflated); a stream that
--   is not in it is a bad stream and raises an error, as does an empty result, as in the
--   engine.

local SP = require("statepack51")

VFS = {}
VFS_STANDIN = { calls = 0 }

local function unpacker(size, decode)
  return function(s, pos, count)
    VFS_STANDIN.calls = VFS_STANDIN.calls + 1
    local len = #s
    if pos ~= nil then
      if pos < 1 or pos >= len then
        return
      end
    else
      pos = 1
    end
    local left = len - pos + 1
    if left < size then
      return
    end
    if count == nil then
      return decode(s, pos)
    end
    local most = math.floor(left / size)
    if count > most then count = most end
    local t = {}
    for i = 1, count do
      t[i] = decode(s, pos + (i - 1) * size)
    end
    return t
  end
end

local function u(s, p, n)
  local v, scale = 0, 1
  for i = 0, n - 1 do
    v = v + string.byte(s, p + i) * scale
    scale = scale * 256
  end
  return v
end

VFS.UnpackU8 = unpacker(1, function(s, p) return u(s, p, 1) end)
VFS.UnpackU16 = unpacker(2, function(s, p) return u(s, p, 2) end)
VFS.UnpackU32 = unpacker(4, function(s, p) return u(s, p, 4) end)
VFS.UnpackS8 = unpacker(1, function(s, p) local v = u(s, p, 1); if v >= 128 then v = v - 256 end; return v end)
VFS.UnpackS16 = unpacker(2, function(s, p) local v = u(s, p, 2); if v >= 32768 then v = v - 65536 end; return v end)
VFS.UnpackS32 = unpacker(4, function(s, p) local v = u(s, p, 4); if v >= 2147483648 then v = v - 4294967296 end; return v end)
VFS.UnpackF32 = unpacker(4, function(s, p) return SP.f32_of_bytes(string.byte(s, p, p + 3)) end)

local inflated = {}

--- Loads the side file of (zlib stream, inflated bytes) pairs: for each pair a line
--- "<stream length> <inflated length>" and then both byte runs.
function VFS_STANDIN.load_inflated(path)
  local f = assert(io.open(path, "rb"))
  local data = f:read("*a")
  f:close()
  local at = 1
  while at <= #data do
    local nl = string.find(data, "\n", at, true)
    local zl, il = string.match(string.sub(data, at, nl - 1), "^(%d+) (%d+)$")
    zl, il = tonumber(zl), tonumber(il)
    local z = string.sub(data, nl + 1, nl + zl)
    inflated[z] = string.sub(data, nl + zl + 1, nl + zl + il)
    at = nl + zl + il + 1
  end
end

function VFS.ZlibDecompress(z)
  local out = inflated[z]
  if out == nil then
    error("zlib: bad stream (" .. #z .. " bytes)")
  end
  if #out == 0 then
    error("zlib: empty result")
  end
  return out
end
