-- tak 18 12 6 (= 7), repeated 300 times (the same algorithm and count as tak.scm).
local function tak(x, y, z)
  if not (y < x) then return z end
  return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y))
end

local r = 0
for _ = 1, 300 do r = tak(18, 12, 6) end
print(r)
