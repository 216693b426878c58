-- Runs modules generated with `statepack-codegen --target lua51` for the cross-tests.
-- Argument: a jobs file, one job a line, fields separated by tabs:
--   <module file> <input file> <inflated side file or -> <output file> <mode>
-- mode: "decode" (M.decode), "open" (M.open, then every deferred instance read), each with
-- "+vfs" (columns through the VFS.Unpack* stand-ins) or "+plain" (arithmetic only), and
-- "+check" (the 32-bit float number checks on); "window:<k>" (CBTK: M.open, the header, then
-- window k's main chunk with every column read; the value is { head, main, inflates,
-- vfs_calls }: the number of inflate calls and of VFS.Unpack* calls made for the window).
-- Each output file is a Luau chunk the Rust side evaluates:
--   return { ok = true, value = <the value read>, checked = <numbers checked> }
--   return { ok = false, path = ..., offset = ..., kind = ..., message = ... }
require("vfs_standin")
local SP = require("statepack51")

local function num(x)
  if x ~= x then
    return "(0/0)"
  elseif x == math.huge then
    return "math.huge"
  elseif x == -math.huge then
    return "(-math.huge)"
  elseif x == 0 and 1 / x < 0 then
    return "(-0)"
  end
  return string.format("%.17g", x)
end

local function str(s)
  return '"' .. string.gsub(s, '[^%w %.,:;_%-%+/%*%(%)%[%]<>=!?#@%%]', function(c)
    return string.format("\\%03d", string.byte(c))
  end) .. '"'
end

local function ser(v, out, depth)
  if depth > 180 then
    error("value nested too deeply to print")
  end
  local t = type(v)
  if t == "number" then
    out[#out + 1] = num(v)
  elseif t == "string" then
    out[#out + 1] = str(v)
  elseif t == "boolean" then
    out[#out + 1] = tostring(v)
  elseif t == "table" then
    out[#out + 1] = "{"
    local n = #v
    for i = 1, n do
      ser(v[i], out, depth + 1)
      out[#out + 1] = ","
    end
    local keys = {}
    for k in pairs(v) do
      if not (type(k) == "number" and k >= 1 and k <= n and math.floor(k) == k) then
        keys[#keys + 1] = k
      end
    end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do
      out[#out + 1] = "["
      if type(k) == "number" then out[#out + 1] = num(k) else out[#out + 1] = str(tostring(k)) end
      out[#out + 1] = "]="
      ser(v[k], out, depth + 1)
      out[#out + 1] = ","
    end
    out[#out + 1] = "}"
  else
    out[#out + 1] = "nil"
  end
end

local modules = {}
-- The module of `path` (loaded once); a module that does not load raises its error when
-- used, so one bad module fails its own jobs only.
local function module(path)
  local m = modules[path]
  if m == nil then
    local chunk, why = loadfile(path)
    if chunk == nil then
      m = { err = "module does not load: " .. tostring(why) }
    else
      local ok, v = pcall(function() return chunk()(SP) end)
      if ok then m = { mod = v } else m = { err = "module does not run: " .. tostring(v) } end
    end
    modules[path] = m
  end
  if m.err ~= nil then
    error(m.err, 0)
  end
  return m.mod
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

for line in io.lines(arg[1]) do
  local mpath, input, side, output, mode = string.match(line, "^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)$")
  if side ~= "-" then
    VFS_STANDIN.load_inflated(side)
  end
  SP.use_vfs = string.find(mode, "+vfs", 1, true) ~= nil
  SP.check_f32 = string.find(mode, "+check", 1, true) ~= nil
  SP.checked = 0
  local data = slurp(input)
  local ok, v = pcall(function()
    local M = module(mpath)
    local k = string.match(mode, "^window:(%d+)")
    if k ~= nil then
      local calls = 0
      local function inflate(z)
        calls = calls + 1
        return VFS.ZlibDecompress(z)
      end
      local track = M.open(SP.from_string(data), inflate)
      local head = track.head
      local before = VFS_STANDIN.calls
      local main = SP.G.force(track.windows[tonumber(k) + 1].main)
      return { head = head, main = main, inflates = calls, vfs_calls = VFS_STANDIN.calls - before }
    end
    if string.find(mode, "open", 1, true) == 1 then
      return SP.G.force(M.open(SP.from_string(data), VFS.ZlibDecompress))
    end
    return M.decode(SP.from_string(data), VFS.ZlibDecompress)
  end)
  local out = {}
  if ok then
    out[1] = "return { ok = true, checked = " .. SP.checked .. ", value = "
    ser(v, out, 0)
    out[#out + 1] = " }\n"
  elseif SP.is_error(v) then
    out[1] = "return { ok = false, path = " .. str(v.path) .. ", offset = " .. num(v.offset)
      .. ", kind = " .. str(v.kind or "") .. ", message = " .. str(tostring(v)) .. " }\n"
  else
    out[1] = "return { ok = false, path = \"\", offset = -1, kind = \"lua\", message = " .. str(tostring(v)) .. " }\n"
  end
  local f = assert(io.open(output, "wb"))
  f:write(table.concat(out))
  f:close()
end
