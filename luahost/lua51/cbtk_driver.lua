-- Samples unit positions of a CBTK track in Lua 5.1 for the cross-test.
-- Arguments: track file, inflated side file, frames file (one frame a line),
-- "vfs" or "plain" (columns through VFS.Unpack* or arithmetic), "check" or "nocheck"
-- (the 32-bit float profile's number checks).
-- Output: "F <frame> <units>" then one "U serial unit_id def team x y z qx qy qz qw" line per
-- unit, numbers with 17 significant digits; "CHECKED <numbers checked> VFS <calls>" at the
-- end; "E <error>" when opening the track or sampling a frame fails.
require("vfs_standin")
local SP = require("statepack51")
local Cbtk = require("cbtk_sample")(SP)

local track_path, side, frames_path, mode, check = arg[1], arg[2], arg[3], arg[4], arg[5]
VFS_STANDIN.load_inflated(side)
SP.use_vfs = (mode == "vfs")
SP.check_f32 = (check == "check")
local f = assert(io.open(track_path, "rb"))
local opened, track = pcall(Cbtk.open, SP.from_file(f), VFS.ZlibDecompress)
if not opened then
  io.write("E " .. tostring(track) .. "\n")
  return
end
local out = {}
local function g(x) return string.format("%.17g", x) end
for line in io.lines(frames_path) do
  local frame = tonumber(line)
  local ok, units = pcall(Cbtk.sample_units, track, frame)
  if not ok then
    out[#out + 1] = "E " .. tostring(units)
  else
    out[#out + 1] = "F " .. g(frame) .. " " .. #units
    for _, u in ipairs(units) do
      out[#out + 1] = table.concat({ "U", u.serial, u.unit_id, u.def, u.team,
        g(u.pos[1]), g(u.pos[2]), g(u.pos[3]), g(u.rot[1]), g(u.rot[2]), g(u.rot[3]), g(u.rot[4]) }, " ")
    end
  end
end
out[#out + 1] = "CHECKED " .. SP.checked .. " VFS " .. VFS_STANDIN.calls
io.write(table.concat(out, "\n"), "\n")
f:close()
