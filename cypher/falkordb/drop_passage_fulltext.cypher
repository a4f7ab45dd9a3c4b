// Migration to schema 6: the full-text index of the passages' texts goes (one of their terms
// replaces it: index_passage_fulltext).
CALL db.idx.fulltext.drop('Passage')
