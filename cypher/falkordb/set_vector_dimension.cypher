// Record the dimension of the graph's vectors (its index beside the graph has no schema of its own).
MERGE (m:Meta {id: 'kgp'})
SET m.dimension = $dimension
RETURN m.dimension AS dimension
