// Record the encoder the graph's vectors are made with.
MERGE (m:Meta {id: 'kgp'})
SET m.encoder = $encoder
RETURN m.encoder AS encoder
