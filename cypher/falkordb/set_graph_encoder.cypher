// Record the encoder the graph's vectors are made with, and the schema version it is written in.
MERGE (m:Meta {id: 'kgp'})
SET m.encoder = $encoder, m.schema = $schema
RETURN m.encoder AS encoder
