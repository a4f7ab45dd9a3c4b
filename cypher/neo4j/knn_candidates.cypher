// Nearest passages of many vectors at once, each to its own depth r.limit, with their cosine
// similarity (Neo4j's score is (1 + cosine) / 2); per vector, one document and a few ids are left
// out. Also the index's size (Neo4j keeps no orphaned vectors: the passages): a search that deep
// has seen everything.
MATCH (p:Passage)
WITH count(p) AS bound
// Only passages of documents the caller may read are returned ($caller_groups; $caller_reads_all
// reads all); a search that came back short because of them asks again, deeper.
UNWIND $rows AS r
CALL db.index.vector.queryNodes('passage_embedding', r.limit, r.vector) YIELD node, score
OPTIONAL MATCH (d:Document {id: node.doc_id})
WITH bound, r, node, score, d
WHERE $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
WITH bound, r, collect({id: node.id, doc: node.doc_id, similarity: 2.0 * score - 1.0}) AS found
RETURN r.i AS i, bound,
       [h IN found WHERE h.doc <> r.exclude_doc AND NOT h.id IN r.exclude | [h.id, h.similarity]]
       AS hits
