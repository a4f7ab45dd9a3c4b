CALL db.index.fulltext.queryNodes('passage_text', $query, {limit: $limit}) YIELD node, score
RETURN node.id AS id, score
ORDER BY score DESC, id
LIMIT $limit
