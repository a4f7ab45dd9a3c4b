// The embeddings of passages by id, for linking new passages (admin: every document).
UNWIND $ids AS id
MATCH (p:Passage {id: id})
RETURN p.id AS id, p.embedding AS embedding
