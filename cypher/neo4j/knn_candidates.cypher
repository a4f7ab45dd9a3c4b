// Nearest passages of many vectors at once, each to its own depth r.limit, with their cosine
// similarity (Neo4j's score is (1 + cosine) / 2); per vector, one document and a few ids are left
// out. Also the index's size (Neo4j keeps no orphaned vectors: the passages): a search that deep
// has seen everything.
MATCH (p:Passage)
WITH count(p) AS bound
UNWIND $rows AS r
CALL db.index.vector.queryNodes('passage_embedding', r.limit, r.vector) YIELD node, score
WITH bound, r, collect({id: node.id, doc: node.doc_id, similarity: 2.0 * score - 1.0}) AS found
RETURN r.i AS i, bound,
       [h IN found WHERE h.doc <> r.exclude_doc AND NOT h.id IN r.exclude | [h.id, h.similarity]]
       AS hits
