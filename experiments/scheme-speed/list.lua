-- List-heavy: build a list of 1 000 000 integers, map (x + 1) over it, reverse it and sum
-- it; twice; print the total. Lists are cons cells, each a 2-element table {head, tail}
-- with nil as the empty list, as in list.scm (not Lua arrays), so each step allocates the
-- same number of cells as the Scheme program.

local function build(n)            -- (1 2 ... n)
  local l = nil
  for i = n, 1, -1 do l = {i, l} end
  return l
end

-- In order and iteratively, filling in each new cell's tail: a recursion a million deep
-- would overflow Lua's stack.
local function map(f, l)
  if l == nil then return nil end
  local head = {f(l[1]), nil}
  local last = head
  l = l[2]
  while l ~= nil do
    local cell = {f(l[1]), nil}
    last[2] = cell
    last = cell
    l = l[2]
  end
  return head
end

local function reverse(l)
  local r = nil
  while l ~= nil do r = {l[1], r}; l = l[2] end
  return r
end

local function sum(l)
  local s = 0
  while l ~= nil do s = s + l[1]; l = l[2] end
  return s
end

local total = 0
for _ = 1, 2 do
  total = total + sum(reverse(map(function(x) return x + 1 end, build(1000000))))
end
print(total)
