// The keyword links the documents' passages have: what a write of them made. FalkorDB 4.16 at
// times keeps a write whole but for its HAS_KEYWORD subquery (the sync machine's clean syncs,
// first syncs into new graphs of a busy server: 4 times in about 50 runs), so the store counts
// them after each write and writes the documents again while they are short (write_whole).
// (A read of its own: counted in the write, a relationship type the write itself creates is
// not seen, and a graph's first write counted none.)
UNWIND $doc_ids AS doc_id
MATCH (:Passage {doc_id: doc_id})-[h:HAS_KEYWORD]->(:Keyword)
RETURN count(h) AS keyworded
