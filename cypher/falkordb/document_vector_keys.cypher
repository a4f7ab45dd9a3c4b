// The vector keys of documents' passages: what a write that replaces or removes them takes out
// of the index beside the graph.
UNWIND $doc_ids AS doc_id
MATCH (p:Passage {doc_id: doc_id})
RETURN collect(p.vkey) AS keys
