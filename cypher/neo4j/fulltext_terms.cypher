// For each query term, the passages the full-text index matches (analysed, as the index does):
// its document frequency, and the ids when it matches at most $cap passages; n is the number of
// passages. kgp ranks by BM25 over these sets, counted over the passages the caller may read:
// Lucene's own score weighs every passage of the index, so it would reveal the others.
MATCH (p:Passage)
WITH count(p) AS everything
OPTIONAL MATCH (d:Document)
WHERE NOT $caller_admin AND any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
OPTIONAL MATCH (d)-[:HAS_PASSAGE]->(q:Passage)
WITH everything, count(q) AS readable
WITH CASE WHEN $caller_admin THEN everything ELSE readable END AS n
UNWIND $terms AS term
CALL (n, term) {
  CALL db.index.fulltext.queryNodes('passage_text', term) YIELD node
  OPTIONAL MATCH (d:Document {id: node.doc_id})
  WITH node, d
  WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
  RETURN collect(node.id) AS ids
}
RETURN n, term, size(ids) AS df, CASE WHEN size(ids) <= $cap THEN ids ELSE [] END AS ids
