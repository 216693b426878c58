-- Times CBTK v1 window decode in Lua 5.1 with the VM's own clock (os.clock, CPU time):
-- the generated reader (cbtrack_v1.lua's chunk_body over the runtime, as a window's main
-- chunk is read after it is inflated) beside a plain hand-written reader of the same bytes.
-- Both read with arithmetic (no VFS here: the engine's VFS.Unpack* are C, the test stand-ins
-- are Lua, so neither side uses them), and the hand-written one checks what the generated one
-- does (bytes left, counts, the 2^24 bounds of offsets and counts, u4/s4 values).
-- Arguments: chunks file (inflated main chunks, each "<length>\n<bytes>"), rounds, repetitions.
-- Output: "CHECKED <chunks> <columns> <values>" once both readers agree on every chunk, then
-- per round "ROUND <k> generated <s> hand_written <s>" (each the CPU time of `repetitions`
-- decodes of every chunk; the two alternate within a round).
local SP = require("statepack51")
SP.use_vfs = false
local Layout = require("cbtrack_v1")(SP)
local S = SP.G

local chunks_path, rounds, reps = arg[1], tonumber(arg[2]), tonumber(arg[3])

local chunks = {}
do
  local f = assert(io.open(chunks_path, "rb"))
  while true do
    local line = f:read("*l")
    if line == nil then break end
    chunks[#chunks + 1] = f:read(tonumber(line))
  end
  f:close()
end

-- The hand-written reader: what a widget author writes for the chunk's column directory
-- (u32 count, then 12-byte entries id u16, type u16, offset u32, count u32) and its columns.
local byte, floor, ldexp = string.byte, math.floor, math.ldexp
local WIDTH = { 1, 2, 2, 4, 4, 4 }

local function u32(s, i, what)
  local a, b, c, d = byte(s, i, i + 3)
  if d ~= 0 then error(what .. ": beyond 2^24") end
  return a + b * 256 + c * 65536
end

local function f32(a, b, c, d)
  local sign = 1
  if d >= 128 then sign = -1; d = d - 128 end
  local exp = d * 2 + floor(c / 128)
  local mant = (c % 128) * 65536 + b * 256 + a
  if exp == 0 then return sign * ldexp(mant, -149) end
  if exp == 255 then
    if mant == 0 then return sign * math.huge end
    return 0 / 0
  end
  return sign * ldexp(mant + 8388608, exp - 150)
end

local function column(s, ty, at, n)
  local out = {}
  local i = at + 1
  if ty == 1 then
    for k = 1, n do out[k] = byte(s, i); i = i + 1 end
  elseif ty == 2 then
    for k = 1, n do
      local a, b = byte(s, i, i + 1)
      out[k] = a + b * 256
      i = i + 2
    end
  elseif ty == 3 then
    for k = 1, n do
      local a, b = byte(s, i, i + 1)
      if b >= 128 then out[k] = a + b * 256 - 65536 else out[k] = a + b * 256 end
      i = i + 2
    end
  elseif ty == 4 then
    for k = 1, n do
      local a, b, c, d = byte(s, i, i + 3)
      if d ~= 0 then error("u4_values: beyond 2^24") end
      out[k] = a + b * 256 + c * 65536
      i = i + 4
    end
  elseif ty == 5 then
    for k = 1, n do
      local a, b, c, d = byte(s, i, i + 3)
      local x
      if d == 0 then x = a + b * 256 + c * 65536
      elseif d == 255 then x = a + b * 256 + c * 65536 - 16777216
      else error("s4_values: beyond 2^24") end
      if x < -16777215 then error("s4_values: beyond 2^24") end
      out[k] = x
      i = i + 4
    end
  else
    for k = 1, n do
      out[k] = f32(byte(s, i, i + 3))
      i = i + 4
    end
  end
  return out
end

local NAMES = { "u1_values", "u2_values", "s2_values", "u4_values", "s4_values", "f4_values" }

local function hand_written(s)
  local len = #s
  if len < 4 then error("num_columns: input ends early") end
  local n = u32(s, 1, "num_columns")
  if n * 12 > len - 4 then error("columns: count too large") end
  local cols = {}
  local p = 5
  for c = 1, n do
    local a, b, x, y = byte(s, p, p + 3)
    local e = { __type = "column_entry", id = a + b * 256, type_code = x + y * 256,
      offset = u32(s, p + 4, "offset"), count = u32(s, p + 8, "count") }
    local w = WIDTH[e.type_code]
    if w ~= nil then
      if e.offset > len or e.count * w > len - e.offset then error("column " .. (c - 1) .. ": input ends early") end
      e[NAMES[e.type_code]] = column(s, e.type_code, e.offset, e.count)
    end
    cols[c] = e
    p = p + 12
  end
  return { __type = "chunk_body", directory = { __type = "column_directory", num_columns = n, columns = cols } }
end

local root = S.reader("", nil, false)
local function generated(s)
  return Layout.ChunkBody.read(S.subOver(root, s))
end

-- Both readers agree on every chunk before anything is timed.
local columns, values = 0, 0
for ci, s in ipairs(chunks) do
  local g, h = generated(s).directory, hand_written(s).directory
  assert(g.num_columns == h.num_columns, "chunk " .. ci .. ": column counts differ")
  for c, ge in ipairs(g.columns) do
    local he = h.columns[c]
    for _, k in ipairs({ "id", "type_code", "offset", "count" }) do
      assert(ge[k] == he[k], "chunk " .. ci .. " column " .. c .. ": " .. k .. " differs")
    end
    local name = NAMES[ge.type_code]
    if name ~= nil then
      local gv, hv = ge[name], he[name]
      assert(#gv == #hv, "chunk " .. ci .. " column " .. c .. ": lengths differ")
      for k = 1, #gv do
        local a, b = gv[k], hv[k]
        assert(a == b or (a ~= a and b ~= b), "chunk " .. ci .. " column " .. c .. " value " .. k .. " differs")
      end
      values = values + #gv
    end
    columns = columns + 1
  end
end
io.write("CHECKED " .. #chunks .. " " .. columns .. " " .. values .. "\n")

local function time(f)
  local t0 = os.clock()
  for _ = 1, reps do
    for _, s in ipairs(chunks) do f(s) end
  end
  return os.clock() - t0
end

time(generated)
time(hand_written)
for k = 1, rounds do
  local g = time(generated)
  local h = time(hand_written)
  io.write(string.format("ROUND %d generated %.6f hand_written %.6f\n", k, g, h))
end
