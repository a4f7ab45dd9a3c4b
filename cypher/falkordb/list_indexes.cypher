CALL db.indexes() YIELD label, types, options
RETURN label, types, options
