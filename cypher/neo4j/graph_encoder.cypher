// The encoder the graph's vectors were made with (kgp records it at the first sync).
MATCH (m:Meta {id: 'kgp'})
RETURN m.encoder AS encoder
