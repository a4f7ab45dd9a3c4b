// The saved traces the caller may see, newest first: a trace made with groups G is seen by
// callers that hold every group of G (the admin's traces, groups ['*'], by the admin alone;
// the admin sees every trace). items counts what it retrieved that the caller may read now;
// gone lists the ids it cited (t.cited) that are no longer there, removed or replaced since.
// The documents are looked up by a list, not by x.doc_id, which FalkorDB 4.16 cannot take
// when x is null (a trace whose every item is gone).
MATCH (t:Trace)
WHERE $caller_admin
      OR (size(coalesce(t.groups, [])) > 0 AND all(g IN t.groups WHERE g IN $caller_groups))
WITH t
ORDER BY t.created DESC, t.id
LIMIT $limit
OPTIONAL MATCH (t)-[:RETRIEVED]->(x)
WITH t, collect(x.doc_id) AS cited_docs, collect(x.id) AS present
OPTIONAL MATCH (d:Document)
WHERE d.id IN cited_docs
      AND ($caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups))
WITH t, cited_docs, present, collect(d.id) AS readable
RETURN t.id AS id, t.question AS question, t.scorer AS scorer, t.seeder AS seeder,
       t.created AS created, t.groups AS groups,
       size([doc IN cited_docs WHERE doc IN readable]) AS items,
       [cited IN coalesce(t.cited, []) WHERE NOT cited IN present] AS gone
ORDER BY created DESC, id
