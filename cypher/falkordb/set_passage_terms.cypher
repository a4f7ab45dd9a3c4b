// Migration to schema 6: store each passage's terms, which the full-text index holds.
UNWIND $rows AS r
MATCH (p:Passage {id: r.id})
SET p.terms = r.terms
RETURN count(p) AS updated
