// Relationships by type among the documents the caller may read (kgp stats with groups, when
// some are not; the traces' are readable_trace_counts): SIMILAR only between passages of
// readable documents, found by walking to the target's document (a lookup by id per edge took
// minutes at 373k passages); CONTAINS of pages and of their tables (a table contains its rows'
// passages).
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[r:HAS_PAGE]->()
RETURN 'HAS_PAGE' AS name, count(r) AS count
UNION ALL
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[:HAS_PAGE]->(:Page)-[:CONTAINS*0..1]->(x)-[r:CONTAINS]->()
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
MATCH (d)-[:HAS_PASSAGE]->(:Passage)-[r:SIMILAR]->(:Passage)<-[:HAS_PASSAGE]-(e:Document)
WHERE $caller_admin OR any(g IN coalesce(e.groups, []) WHERE g IN $caller_groups)
RETURN 'SIMILAR' AS name, count(r) AS count
