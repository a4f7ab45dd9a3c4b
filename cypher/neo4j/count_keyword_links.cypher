// The keyword links the documents' passages have: what a write of them made. Neo4j keeps its
// writes whole and never asks it (GraphStore.short_writes); it is here as every query is in both
// dialects (the FalkorDB one says why the embedded store counts them after each write).
UNWIND $doc_ids AS doc_id
MATCH (:Passage {doc_id: doc_id})-[h:HAS_KEYWORD]->(:Keyword)
RETURN count(h) AS keyworded
