SHOW VECTOR INDEXES YIELD name, options
WHERE name = 'passage_embedding'
RETURN options.indexConfig['vector.dimensions'] AS dimension
