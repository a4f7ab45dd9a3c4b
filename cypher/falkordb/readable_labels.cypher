// Nodes by label that the caller may read (kgp stats with groups, when some documents are not;
// the traces are readable_trace_counts): the documents of the caller's groups, their pages,
// tables, passages and keywords.
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
RETURN 'Document' AS name, count(d) AS count
UNION ALL
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[:HAS_PAGE]->(n:Page)
RETURN 'Page' AS name, count(n) AS count
UNION ALL
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[:HAS_PAGE]->(:Page)-[:CONTAINS]->(n:Table)
RETURN 'Table' AS name, count(n) AS count
UNION ALL
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[:HAS_PASSAGE]->(n:Passage)
RETURN 'Passage' AS name, count(n) AS count
UNION ALL
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (d)-[:HAS_PASSAGE]->(:Passage)-[:HAS_KEYWORD]->(n:Keyword)
RETURN 'Keyword' AS name, count(DISTINCT n) AS count
