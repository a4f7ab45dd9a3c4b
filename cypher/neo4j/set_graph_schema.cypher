MERGE (m:Meta {id: 'kgp'})
SET m.schema = $schema
RETURN m.schema AS schema
