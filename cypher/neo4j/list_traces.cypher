// The saved traces the caller may see, newest first: a trace made with groups G is seen by
// callers that hold every group of G (the admin's traces, groups ['*'], by the admin alone;
// the admin sees every trace).
MATCH (t:Trace)
WHERE $caller_admin OR all(g IN coalesce(t.groups, ['*']) WHERE g IN $caller_groups)
OPTIONAL MATCH (t)-[r:RETRIEVED]->()
WITH t, count(r) AS items
RETURN t.id AS id, t.question AS question, t.scorer AS scorer, t.seeder AS seeder,
       t.created AS created, t.groups AS groups, items
ORDER BY created DESC, id
LIMIT $limit
