// The full-text index holds each passage's terms (kgp.text.index_terms: the distinct stems of its
// words, stemmed by kgp), not its text: FalkorDB 4.16 builds the index again at every start,
// before it answers, and stemming every word there took most of that time. So no stemming and
// no stop words here: the terms are matched exactly as written, and a query's terms are stemmed
// the same way (kgp.stores.search).
CALL db.idx.fulltext.createNodeIndex({label: 'Passage', stopwords: []}, {field: 'terms', nostem: true})
