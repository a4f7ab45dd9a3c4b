// The vector index's live passages and orphaned vectors, from FalkorDB's own statistics: every
// vector added to the index minted a document id, and FalkorDB 4.16 never removes one (issue
// #2179), so maxDocId bounds its entries. Orphans come from deleted passages, from writes to
// indexed passages, and from replaying the append-only file after a restart (which indexes each
// replayed passage twice).
CALL db.indexes() YIELD label, info
WITH label, info
WHERE label = 'Passage'
RETURN info.numDocuments AS live, info.maxDocId - info.numDocuments AS orphans
