-- CBTK v1 in Lua 5.1: open a track, read its header and window index, inflate one window's
-- main chunk and read its unit and transform-key columns, and sample where every unit is at
-- a frame (position in elmos, rotation as a unit quaternion).
--
-- Usage (the module is a function of the runtime and of the CBTK reader generated from
-- schema/cbtrack_v1.ksy, cbtrack_v1.lua beside it, so it runs under require or VFS.Include):
--   local dir = "LuaUI/Widgets/statepack/"
--   local SP = VFS.Include(dir .. "statepack51.lua")
--   local Cbtk = VFS.Include(dir .. "cbtk_sample.lua")(SP, VFS.Include(dir .. "cbtrack_v1.lua")(SP))
--   local data = VFS.LoadFile("tracks/match.cbtrack")
--   local track = Cbtk.open(SP.from_string(data), VFS.ZlibDecompress)
--   local units = Cbtk.sample_units(track, 1234.5)
-- With `require`, the second argument may be left out: require("cbtrack_v1") is used.
--
-- `inflate(zstring)` turns one zlib stream (RFC 1950) into its bytes and raises a Lua error
-- on a bad stream; VFS.ZlibDecompress is that function in the engine.
--
-- Layout (schema cbtrack_v1, read by the generated module): a header of at least 96
-- bytes, then 16 bytes per window (main block, main length, terrain block, terrain length,
-- each u32); a chunk starts at block number x 64. Main chunk columns used: units 1 (unit id), 2 (serial), 3 (definition), 4
-- (team), 6 and 7 (first and last offset), 8 (transform key count); transform keys 16
-- (time), 17-19 (position, difference with an escape), 20-22 (wide values), 23 (dropped
-- component), 24-26 (kept components, wrapping difference, signed). A column that is not
-- listed has no values (0 for every entry).
--
-- Sampling: between two transform keys the position is a straight line and the rotation the
-- normalized blend (nlerp, the second negated when the dot product is negative); before the
-- first key and after the last the nearest key holds. A unit is shown when first <= t <= last
-- with t the frame minus the window's first frame. Frames may fall between two frames.
--
-- Numbers: every whole number computed goes through SP.n (checked against 2^24 when
-- SP.check_f32 is set). Block offsets above 2^24 are multiples of 64 and stay exact.

return function(SP, Gen)
  -- The layout reader generated from schema/cbtrack_v1.ksy (`--target lua51
  -- --f32-profile`, checked in beside this file as cbtrack_v1.lua), given the same runtime.
  if Gen == nil and require ~= nil then
    Gen = require("cbtrack_v1")(SP)
  end
  assert(Gen ~= nil, "cbtk_sample.lua needs the generated module: (SP, VFS.Include(dir .. \"cbtrack_v1.lua\")(SP))")
  local N = SP.n
  local G = SP.G
  local Cbtk = {}
  local ESCAPE = -32768
  local FRAC_1_SQRT_2 = math.sqrt(0.5)
  local VALUES = { [1] = "u1_values", [2] = "u2_values", [3] = "s2_values", [4] = "u4_values",
    [5] = "s4_values", [6] = "f4_values" }

  --- Opens a track: reads the header and the window index (nothing else) with the generated
  --- reader; its chunks are positional instances, read when a window is asked for.
  function Cbtk.open(src, inflate)
    local r = G.reader(src, inflate, true)
    local raw = Gen.CbtrackV1.read(r)
    local h = {}
    for k, v in pairs(raw.head) do
      h[k] = v
    end
    h.pos_step = 1 / 2 ^ h.position_shift
    local index = {}
    for k = 0, h.num_windows - 1 do
      index[k] = raw.head.index[k + 1]
    end
    return { src = src, inflate = inflate, r = r, header = h, index = index, cache = {} }
  end

  --- The window holding `frame`: floor((frame - first) / length), the last window past the
  --- end; nil outside the track's frames.
  function Cbtk.window_of(track, frame)
    local h = track.header
    if frame ~= frame or frame < h.first_frame or frame > h.last_frame then
      return nil
    end
    local k = N(math.floor((frame - h.first_frame) / h.window_length))
    local last = math.max(h.num_windows, 1) - 1
    if k > last then k = last end
    return k
  end

  -- The values of column `id` of a chunk's directory (nil when the chunk has no such
  -- column, or one of a type code a reader skips): one VFS.Unpack* call in the engine.
  local function col(dir, id)
    local e = dir[id]
    if e == nil or VALUES[e.type_code] == nil then
      return nil
    end
    return e[VALUES[e.type_code]]
  end

  --- Reads window k (0-based): inflates its main chunk and decodes its units with their
  --- transform keys. Errors name the window and the column.
  function Cbtk.window(track, k)
    local h = track.header
    local e = track.index[k]
    if e == nil then
      SP.fail("windows[" .. k .. "]", 0, "no window " .. k .. " in a track of " .. h.num_windows)
    end
    -- A chunk that cannot be fetched or inflated is named by its index entry, as in Rust:
    -- at the entry's offset when the chunk lies outside the file, at the chunk's own offset
    -- when it does not inflate.
    local ipath = "head.index[" .. k .. "].main_block"
    local iat = N(h.header_size + 16 * k)
    local at = N(e.main_block * 64)
    if e.main_len == 0 or at + e.main_len > track.src.size then
      SP.fail(ipath, iat, "main chunk of " .. e.main_len .. " byte(s) at byte " .. at .. " lies outside the file")
    end
    -- The generated reader's window (its main chunk deferred) at the path `windows[k]`.
    local wr = G.view(track.r)
    wr.path = { "windows", k }
    local w = Gen.Window.read(wr, e)
    local ok, main = pcall(function() return w.main end)
    if not ok then
      if SP.is_error(main) and main.kind == "process" and main.path == "windows[" .. k .. "].main" then
        SP.fail(ipath, at, main.message)
      end
      error(main, 0)
    end
    local dir = {}
    for _, c in ipairs(main.directory.columns) do
      dir[c.id] = c
    end
    local cp = "windows[" .. k .. "].main.columns"
    local uid, serial, def, team = col(dir, 1), col(dir, 2), col(dir, 3), col(dir, 4)
    local first, last, tcount = col(dir, 6), col(dir, 7), col(dir, 8)
    local time = col(dir, 16)
    local nx, ny, nz = col(dir, 17), col(dir, 18), col(dir, 19)
    local wx, wy, wz = col(dir, 20) or {}, col(dir, 21) or {}, col(dir, 22) or {}
    local rd = col(dir, 23)
    local ra, rb, rc = col(dir, 24), col(dir, 25), col(dir, 26)
    local nu = 0
    for _, c in ipairs({ uid or {}, serial or {}, def or {}, team or {}, first or {}, last or {}, tcount or {} }) do
      if #c > nu then nu = #c end
    end
    local function at_or0(c, i)
      if c == nil then return 0 end
      return c[i] or 0
    end
    local start = N(h.first_frame + k * h.window_length)
    local stop = start + h.window_length
    if stop > h.last_frame then stop = h.last_frame end
    if stop < start then stop = start end
    local units = {}
    local ti = 0 -- keys read so far (0-based)
    local wi = { 0, 0, 0 }
    local narrow = { nx, ny, nz }
    local wide = { wx, wy, wz }
    local kept = { ra, rb, rc }
    for i = 1, nu do
      local n = at_or0(tcount, i)
      if n < 1 then
        SP.fail(cp .. "[8]", 0, "unit " .. (i - 1) .. " has no transform key (every unit has at least one)")
      end
      local keys = {}
      local acc_t = 0
      local acc = { 0, 0, 0 }
      local racc = { 0, 0, 0 }
      for x = 1, n do
        local j = ti + x
        acc_t = N(acc_t + at_or0(time, j))
        local pos = {}
        for a = 1, 3 do
          local d = at_or0(narrow[a], j)
          if narrow[a] ~= nil and narrow[a][j] == nil then
            SP.fail(cp .. "[" .. (16 + a) .. "]", 0, "narrow column has fewer values than the keys")
          end
          if d == ESCAPE then
            wi[a] = wi[a] + 1
            local w = wide[a][wi[a]]
            if w == nil then
              SP.fail(cp .. "[" .. (19 + a) .. "]", 0, "wide column has fewer values than the escapes")
            end
            acc[a] = w
          else
            acc[a] = N(acc[a] + d)
          end
          pos[a] = acc[a]
        end
        local rot = {}
        for a = 1, 3 do
          racc[a] = N((racc[a] + at_or0(kept[a], j)) % 65536)
          local v = racc[a]
          if v >= 32768 then v = N(v - 65536) end
          rot[a] = v
        end
        local dropped = at_or0(rd, j)
        if dropped > 3 then dropped = 3 end
        keys[x] = { offset = acc_t, pos = pos, dropped = dropped, rot = rot }
      end
      ti = N(ti + n)
      units[i] = {
        unit_id = at_or0(uid, i), serial = at_or0(serial, i), def = at_or0(def, i), team = at_or0(team, i),
        first = at_or0(first, i), last = at_or0(last, i), keys = keys,
      }
    end
    if time ~= nil and #time ~= ti then
      SP.fail(cp .. "[16]", 0, "transform key columns hold " .. #time .. " value(s), the counts add up to " .. ti)
    end
    return { index = k, start = start, stop = stop, units = units }
  end

  --- The rotation of a key: smallest three with `bits` rotation bits, the dropped component
  --- rebuilt as sqrt(1 - a^2 - b^2 - c^2) (raised to just above the largest kept one if it
  --- came out smaller), normalized when the kept ones add up to more than 1 or it was raised.
  function Cbtk.key_rotation(key, bits)
    local m = N(2 ^ (bits - 1) - 1)
    local step = FRAC_1_SQRT_2 / m
    local k0, k1, k2 = key.rot[1] * step, key.rot[2] * step, key.rot[3] * step
    local ss = k0 * k0 + k1 * k1 + k2 * k2
    local d = math.sqrt(math.max(1.0 - ss, 0.0))
    local largest = math.max(math.abs(k0), math.abs(k1), math.abs(k2))
    local floor = largest * (1.0 + 1.0 / 1048576.0)
    local raised = d < floor
    if raised then d = floor end
    local c = { k0, k1, k2 }
    table.insert(c, key.dropped + 1, d)
    if ss > 1.0 or raised then
      local r = 1.0 / math.sqrt(c[1] * c[1] + c[2] * c[2] + c[3] * c[3] + c[4] * c[4])
      c = { c[1] * r, c[2] * r, c[3] * r, c[4] * r }
    end
    return c
  end

  -- The keys either side of t: i, j (1-based) and the fraction s from i to j.
  local function bracket(keys, t)
    local n = #keys
    local lo, hi = 0, n
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if keys[mid + 1].offset <= t then lo = mid + 1 else hi = mid end
    end
    if lo == 0 then return 1, 1, 0 end
    if lo == n then return n, n, 0 end
    local a, b = keys[lo].offset, keys[lo + 1].offset
    if t <= a or b <= a then return lo, lo, 0 end
    return lo, lo + 1, (t - a) / (b - a)
  end

  local function nlerp(a, b, t)
    if a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] < 0 then
      b = { -b[1], -b[2], -b[3], -b[4] }
    end
    local v = {}
    for i = 1, 4 do v[i] = a[i] * (1.0 - t) + b[i] * t end
    local l = math.sqrt(v[1] * v[1] + v[2] * v[2] + v[3] * v[3] + v[4] * v[4])
    if l > 0 then
      local r = 1.0 / l
      return { v[1] * r, v[2] * r, v[3] * r, v[4] * r }
    end
    return a
  end

  --- The units alive at `frame` (which may lie between frames), each
  --- { serial, unit_id, def, team, pos = {x, y, z} elmos, rot = {x, y, z, w} }, in the order
  --- of the window's units. The window read last is kept. Errors: the frame is outside the
  --- track, or the window's chunk is bad.
  function Cbtk.sample_units(track, frame)
    local k = Cbtk.window_of(track, frame)
    if k == nil then
      local h = track.header
      SP.fail("frame", 0, "frame " .. frame .. " is outside the track's frames " .. h.first_frame .. ".." .. h.last_frame)
    end
    local w = track.cache.window
    if w == nil or w.index ~= k then
      w = Cbtk.window(track, k)
      track.cache.window = w
    end
    local h = track.header
    local ps = h.pos_step
    local t = frame - w.start
    local out = {}
    for _, u in ipairs(w.units) do
      if u.first <= t and t <= u.last then
        local i, j, s = bracket(u.keys, t)
        N(s)
        local ka, kb = u.keys[i], u.keys[j]
        local pos = {}
        for a = 1, 3 do
          local pa, pb = ka.pos[a], kb.pos[a]
          pos[a] = N((pa + (pb - pa) * s) * ps)
        end
        local rot = nlerp(Cbtk.key_rotation(ka, h.rotation_bits), Cbtk.key_rotation(kb, h.rotation_bits), s)
        out[#out + 1] = { serial = u.serial, unit_id = u.unit_id, def = u.def, team = u.team, pos = pos, rot = rot }
      end
    end
    return out
  end

  return Cbtk
end
