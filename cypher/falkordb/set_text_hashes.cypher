// Migration to schema 2: store the hash of each passage's text.
UNWIND $rows AS r
MATCH (p:Passage {id: r.id})
SET p.text_hash = r.hash
RETURN count(p) AS updated
