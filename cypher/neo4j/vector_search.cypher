// Nearest passages by cosine similarity (Neo4j's score is (1 + cosine) / 2).
CALL db.index.vector.queryNodes('passage_embedding', $limit, $vector) YIELD node, score
RETURN node.id AS id, 2.0 * score - 1.0 AS score
ORDER BY score DESC, id
