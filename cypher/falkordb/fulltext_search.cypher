CALL db.idx.fulltext.queryNodes('Passage', $query) YIELD node, score
RETURN node.id AS id, score
ORDER BY score DESC, id
LIMIT $limit
