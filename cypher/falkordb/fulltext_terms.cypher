// For each query term, the passages the full-text index matches (stemmed, as the index does)
// among those the caller may read: its document frequency, and the ids when it matches at most
// $cap passages. kgp ranks by BM25 over these sets (with n, the passages the caller may read:
// count_readable_passages), because FalkorDB's own full-text score does not weigh a term's
// rarity (a common word outscored a rare name); counted over what the caller may read, the
// ranking reveals nothing of the other passages.
UNWIND $terms AS term
CALL db.idx.fulltext.queryNodes('Passage', term) YIELD node
OPTIONAL MATCH (d:Document {id: node.doc_id})
WITH term, node, d
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
WITH term, collect(node.id) AS ids
RETURN term, size(ids) AS df, CASE WHEN size(ids) <= $cap THEN ids ELSE [] END AS ids
