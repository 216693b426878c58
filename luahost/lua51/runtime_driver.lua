-- Reads every value of every column type at every offset of a byte file, for the cross-test
-- of statepack51.lua. Arguments: the file, "vfs" or "plain".
-- Output: one line per type code: "<code> v1 v2 ..." (17 significant digits), for the
-- readers ("R") and the one-call column path ("C"); then "LAST <result>" for a read at the
-- last byte through the column path.
require("vfs_standin")
local SP = require("statepack51")
SP.use_vfs = (arg[2] == "vfs")
SP.check_f32 = false
local f = assert(io.open(arg[1], "rb"))
local s = f:read("*a")
f:close()
local readers = { [1] = SP.u8, [2] = SP.u16le, [3] = SP.s16le, [4] = SP.u32le, [5] = SP.s32le, [6] = SP.f32le }
local function g(x) return string.format("%.17g", x) end
for code = 1, 6 do
  local size = SP.COLUMN_SIZE[code]
  local vals = {}
  for at = 0, #s - size do
    local r = SP.string_reader(s, 0, "t")
    r.at = at + 1
    vals[#vals + 1] = g(readers[code](r, "v"))
  end
  print("R" .. code .. " " .. table.concat(vals, " "))
  -- one call per column: all values from offset 1, count as many as fit before the last byte
  local count = math.floor((#s - 1 - 1) / size)
  local col = SP.column(s, 1, count, code, "c")
  local cv = {}
  for i = 1, #col do cv[i] = g(col[i]) end
  print("C" .. code .. " " .. table.concat(cv, " "))
end
local ok, e = pcall(SP.column, s, #s - 1, 1, 1, "cols[7]")
print("LAST " .. tostring(ok) .. " " .. tostring(e))
