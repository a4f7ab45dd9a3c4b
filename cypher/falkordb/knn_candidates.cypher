// Nearest passages of many vectors at once; per vector, one document and a few ids excluded.
UNWIND $rows AS r
CALL db.idx.vector.queryNodes('Passage', 'embedding', $limit, vecf32(r.vector)) YIELD node
WITH r, node
WHERE node.doc_id <> r.exclude_doc AND NOT node.id IN r.exclude
RETURN r.i AS i, node.id AS id
