// Relationships by type among what the caller may read (kgp stats with groups): SIMILAR only
// between passages of readable documents, RETRIEVED and STEP only of the traces the caller sees.
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[r:HAS_PAGE]->()
RETURN 'HAS_PAGE' AS name, count(r) AS count
UNION ALL
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[:HAS_PAGE]->()-[r:CONTAINS]->()
RETURN 'CONTAINS' AS name, count(r) AS count
UNION ALL
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[r:HAS_PASSAGE]->()
RETURN 'HAS_PASSAGE' AS name, count(r) AS count
UNION ALL
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[:HAS_PASSAGE]->()-[r:NEXT]->()
RETURN 'NEXT' AS name, count(r) AS count
UNION ALL
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[:HAS_PASSAGE]->()-[r:HAS_KEYWORD]->()
RETURN 'HAS_KEYWORD' AS name, count(r) AS count
UNION ALL
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[:HAS_PASSAGE]->()-[r:SIMILAR]->(q:Passage)
OPTIONAL MATCH (e:Document {id: q.doc_id})
WITH r, e
WHERE $caller_admin OR any(g IN coalesce(e.groups, []) WHERE g IN $caller_groups)
RETURN 'SIMILAR' AS name, count(r) AS count
UNION ALL
MATCH (t:Trace)
WHERE $caller_admin
      OR (size(coalesce(t.groups, [])) > 0 AND all(g IN t.groups WHERE g IN $caller_groups))
MATCH (t)-[r:RETRIEVED]->()
RETURN 'RETRIEVED' AS name, count(r) AS count
UNION ALL
MATCH (t:Trace)
WHERE $caller_admin
      OR (size(coalesce(t.groups, [])) > 0 AND all(g IN t.groups WHERE g IN $caller_groups))
MATCH ()-[r:STEP {trace: t.id}]->()
RETURN 'STEP' AS name, count(r) AS count
