// Every passage's id (admin: every document), for the k-NN linker to load the whole graph's
// vectors when a long sync resumes on a graph it did not write.
MATCH (p:Passage)
RETURN p.id AS id
