// Nearest passages by cosine similarity (FalkorDB's score is the cosine distance).
CALL db.idx.vector.queryNodes('Passage', 'embedding', $limit, vecf32($vector)) YIELD node, score
RETURN node.id AS id, 1.0 - score AS score
ORDER BY score DESC, id
