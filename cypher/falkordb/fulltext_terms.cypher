// For each query term, the passages the full-text index matches (stemmed, as the index does):
// its document frequency, and the ids when it matches at most $cap passages; n is the number of
// passages. kgp ranks by BM25 over these sets, because FalkorDB's own full-text score does not
// weigh a term's rarity (a common word outscored a rare name).
MATCH (p:Passage)
WITH count(p) AS n
UNWIND $terms AS term
CALL db.idx.fulltext.queryNodes('Passage', term) YIELD node
WITH n, term, collect(node.id) AS ids
RETURN n, term, size(ids) AS df, CASE WHEN size(ids) <= $cap THEN ids ELSE [] END AS ids
