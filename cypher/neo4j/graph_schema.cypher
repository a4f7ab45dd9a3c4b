// The schema version of the graph (absent: written before kgp recorded one).
MATCH (m:Meta {id: 'kgp'})
RETURN m.schema AS schema
