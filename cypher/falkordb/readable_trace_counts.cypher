// The traces the caller may see (kgp stats with groups), and their RETRIEVED and STEP
// relationships. STEP edges are counted by trace id in one pass, then matched to the traces
// (a pattern per trace would scan every node for each).
MATCH (t:Trace)
WHERE $caller_admin
      OR (size(coalesce(t.groups, [])) > 0 AND all(g IN t.groups WHERE g IN $caller_groups))
RETURN 'Trace' AS name, count(t) AS count
UNION ALL
MATCH (t:Trace)
WHERE $caller_admin
      OR (size(coalesce(t.groups, [])) > 0 AND all(g IN t.groups WHERE g IN $caller_groups))
MATCH (t)-[r:RETRIEVED]->()
RETURN 'RETRIEVED' AS name, count(r) AS count
UNION ALL
MATCH ()-[r:STEP]->()
WITH r.trace AS id, count(r) AS steps
MATCH (t:Trace {id: id})
WHERE $caller_admin
      OR (size(coalesce(t.groups, [])) > 0 AND all(g IN t.groups WHERE g IN $caller_groups))
RETURN 'STEP' AS name, sum(steps) AS count
