// For each query term, the passages the full-text index matches (analysed, as the index does)
// among those the caller may read: its document frequency, and the ids when it matches at most
// $cap passages. kgp ranks by BM25 over these sets (with n, the passages the caller may read:
// count_readable_passages): Lucene's own score weighs every passage of the index, so it would
// reveal the others.
UNWIND $terms AS term
CALL (term) {
  CALL db.index.fulltext.queryNodes('passage_text', term) YIELD node
  OPTIONAL MATCH (d:Document {id: node.doc_id})
  WITH node, d
  WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
  RETURN collect(node.id) AS ids
}
RETURN term, size(ids) AS df, CASE WHEN size(ids) <= $cap THEN ids ELSE [] END AS ids
