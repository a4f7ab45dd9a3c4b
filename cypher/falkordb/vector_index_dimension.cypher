// The dimension of the graph's vectors, as the first schema recorded it (kgp.stores.falkordb.vectors).
MATCH (m:Meta {id: 'kgp'})
RETURN m.dimension AS dimension
