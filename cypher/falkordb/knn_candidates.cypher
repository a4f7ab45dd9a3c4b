// Nearest passages of many vectors at once, each to its own depth r.limit, with their cosine
// similarity (FalkorDB's score is the cosine distance); per vector, one document and a few ids
// are left out. Also the index's size bound (maxDocId: live passages plus orphaned vectors, which
// take places in an answer without being returned): a search that deep has seen everything, and
// one that came back short before it may ask again, deeper. A vector whose every entry at this
// depth was an orphan gets no row.
CALL db.indexes() YIELD label, info
WITH label, info
WHERE label = 'Passage'
WITH info.maxDocId AS bound
// Only passages of documents the caller may read are returned ($caller_groups; $caller_reads_all
// reads all); a search that came back short because of them asks again, deeper.
UNWIND $rows AS r
CALL db.idx.vector.queryNodes('Passage', 'embedding', r.limit, vecf32(r.vector)) YIELD node, score
OPTIONAL MATCH (d:Document {id: node.doc_id})
WITH bound, r, node, score, d
WHERE $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
WITH bound, r, collect({id: node.id, doc: node.doc_id, similarity: 1.0 - score}) AS found
RETURN r.i AS i, bound,
       [h IN found WHERE h.doc <> r.exclude_doc AND NOT h.id IN r.exclude | [h.id, h.similarity]]
       AS hits
