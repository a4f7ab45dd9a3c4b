// For each query term, the passages the full-text index matches (stemmed, as the index does):
// its document frequency, and the ids when it matches at most $cap passages; n is the number of
// passages. kgp ranks by BM25 over these sets, because FalkorDB's own full-text score does not
// weigh a term's rarity (a common word outscored a rare name). Everything is counted over the
// passages the caller may read, so the ranking reveals nothing of the others.
MATCH (p:Passage)
WITH count(p) AS everything
OPTIONAL MATCH (d:Document)
WHERE NOT $caller_admin AND any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
OPTIONAL MATCH (d)-[:HAS_PASSAGE]->(q:Passage)
WITH everything, count(q) AS readable
WITH CASE WHEN $caller_admin THEN everything ELSE readable END AS n
UNWIND $terms AS term
CALL db.idx.fulltext.queryNodes('Passage', term) YIELD node
OPTIONAL MATCH (d:Document {id: node.doc_id})
WITH n, term, node, d
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
WITH n, term, collect(node.id) AS ids
RETURN n, term, size(ids) AS df, CASE WHEN size(ids) <= $cap THEN ids ELSE [] END AS ids
