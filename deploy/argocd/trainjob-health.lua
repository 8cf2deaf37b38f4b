-- Argo CD health check for trainer.kubeflow.org TrainJob (Argo CD runs Lua 5.1, gopher-lua).
-- Healthy only once the TrainJob completed, so a sync wave of TrainJobs counts as done only
-- when every TrainJob in it finished: Argo CD applies the next wave only when every resource
-- of the earlier waves is in sync and healthy. Failed -> Degraded: later waves are never applied.
-- Condition types from Trainer v2.3.0 (Suspended, Complete, Failed).
local hs = {}
local conditions = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  conditions = obj.status.conditions
end
local function find(kind)
  for _, c in ipairs(conditions) do
    if c.type == kind and c.status == "True" then
      return c
    end
  end
  return nil
end
local c = find("Failed")
if c ~= nil then
  hs.status = "Degraded"
  hs.message = c.message or "TrainJob failed"
  return hs
end
c = find("Complete")
if c ~= nil then
  hs.status = "Healthy"
  hs.message = c.message or "TrainJob completed"
  return hs
end
c = find("Suspended")
if c ~= nil or (obj.spec ~= nil and obj.spec.suspend == true) then
  hs.status = "Suspended"
  hs.message = "TrainJob is suspended"
  if c ~= nil and c.message ~= nil then
    hs.message = c.message
  end
  return hs
end
hs.status = "Progressing"
hs.message = "TrainJob is running"
return hs
