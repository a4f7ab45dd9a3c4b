// The vectors of passages by key (those that exist).
UNWIND $keys AS k
MATCH (p:Passage {vkey: k})
RETURN k AS key, p.embedding AS embedding
