// Migration to schema 6: the ids and texts of some documents' passages, by the doc_id index (a
// page of every passage by id would sort what is left at each page: 5.6 s of reads at 100k).
UNWIND $doc_ids AS wanted
MATCH (p:Passage {doc_id: wanted})
RETURN p.id AS id, p.text AS text
