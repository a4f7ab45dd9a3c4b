// For passages by id (admin: every document), the highest cosine similarity of their embedding
// to any of $vectors, computed here (Neo4j's function gives (1 + cosine) / 2): the linker skips
// reading the vector of a weakly linked passage that no new passage comes near.
UNWIND $ids AS id
MATCH (p:Passage {id: id})
UNWIND $vectors AS vector
WITH id, max(vector.similarity.cosine(p.embedding, vector)) AS nearest
RETURN id, 2.0 * nearest - 1.0 AS best
