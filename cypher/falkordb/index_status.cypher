// The state of every index: FalkorDB rebuilds its indexes in the background after loading the
// append-only file ("[Indexing] n/m: UNDER CONSTRUCTION"); until they are OPERATIONAL a
// full-text or vector query returns only part of the graph. While it builds a new version of a
// label's indexes (one more index: a vector index created after a start), the version before
// answers, a row of its own, OPERATIONAL, with its own fields (types).
CALL db.indexes() YIELD label, types, status
RETURN label, types, status
