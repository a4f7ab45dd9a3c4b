// knn_candidates for a caller who reads every passage (the admin, a covered read): no document
// is read (a search 2,048 deep at 100k passages, a bar on: 0.71 s against 0.83 s for 50 vectors).
// Nearest passages of many vectors at once, each to its own depth r.limit, with their cosine
// similarity (Neo4j's score is (1 + cosine) / 2); per vector, one document and a few ids are left
// out, and with r.bar the passages no more similar than it. Also the index's size (Neo4j keeps
// no orphaned vectors: the passages): a search that deep has seen everything; and per vector the
// least similarity among the entries the index returned (left out or not): below r.bar, the
// search saw every passage above it.
MATCH (p:Passage)
WITH count(p) AS bound
UNWIND $rows AS r
CALL db.index.vector.queryNodes('passage_embedding', r.limit, r.vector) YIELD node, score
WITH bound, r.i AS i, r.exclude_doc AS exclude_doc, r.exclude AS exclude,
     coalesce(r.bar, -2.0) AS bar, node, 2.0 * score - 1.0 AS similarity
WITH bound, i, min(similarity) AS lowest,
     collect(CASE
       WHEN similarity > bar AND node.doc_id <> exclude_doc AND NOT node.id IN exclude
       THEN [node.id, similarity]
     END) AS hits
RETURN i, bound, lowest, hits
