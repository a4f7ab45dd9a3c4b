// About $limit random passages with their vectors (each kept with probability $share), for the
// vector index's sampled recall check (kgp stats, kgp maintain).
MATCH (p:Passage)
WHERE rand() < $share
RETURN p.id AS id, p.embedding AS embedding
LIMIT $limit
