// The saved traces the caller may see, newest first: a trace made with groups G is seen by
// callers that hold every group of G (the admin's traces, groups ['*'], by the admin alone;
// the admin sees every trace); items counts what it retrieved that the caller may read now.
MATCH (t:Trace)
WHERE $caller_admin
      OR (size(coalesce(t.groups, [])) > 0 AND all(g IN t.groups WHERE g IN $caller_groups))
OPTIONAL MATCH (t)-[r:RETRIEVED]->(x)
OPTIONAL MATCH (d:Document {id: x.doc_id})
WITH t, sum(CASE
  WHEN r IS NOT NULL
       AND ($caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)) THEN 1
  ELSE 0 END) AS items
RETURN t.id AS id, t.question AS question, t.scorer AS scorer, t.seeder AS seeder,
       t.created AS created, t.groups AS groups, items
ORDER BY created DESC, id
LIMIT $limit
