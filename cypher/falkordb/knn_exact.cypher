// knn_candidates without the vector index, for one vector: every passage's cosine similarity,
// the r.limit best kept (ties by id), then the same filters (what the caller may read, the
// excluded document and ids, r.bar) and the least similarity among them. Used while the index
// is being built after a start (see FalkorStore.open): linear in the passages (about 0.5 us
// each), exact, and never short of an orphan. The bound is the passage count: a search that
// deep has seen every passage.
MATCH (every:Passage)
WITH count(every) AS bound
MATCH (node:Passage)
WITH bound, node, 1.0 - vec.cosineDistance(node.embedding, vecf32($row.vector)) AS similarity
ORDER BY similarity DESC, node.id
LIMIT $limit
OPTIONAL MATCH (d:Document {id: node.doc_id})
WITH bound, node, similarity, d, coalesce($row.bar, -2.0) AS bar
WITH bound, min(similarity) AS lowest,
     collect(CASE
       WHEN similarity > bar AND node.doc_id <> $row.exclude_doc AND NOT node.id IN $row.exclude
            AND ($caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups))
       THEN [node.id, similarity]
     END) AS hits
RETURN $row.i AS i, bound, lowest, hits
