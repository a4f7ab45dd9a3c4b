// The state of every index: FalkorDB rebuilds its indexes in the background after loading the
// append-only file ("[Indexing] n/m: UNDER CONSTRUCTION"); until they are OPERATIONAL a
// full-text or vector query returns only part of the graph.
CALL db.indexes() YIELD label, status
RETURN label, status
