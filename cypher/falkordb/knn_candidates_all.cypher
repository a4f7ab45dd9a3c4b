// knn_candidates for a caller who reads every passage (the admin, a covered read): no document
// is read (a search 2,048 deep at 100k passages, a bar on: 0.71 s against 0.83 s for 50 vectors).
// Nearest passages of many vectors at once, each to its own depth r.limit, with their cosine
// similarity (FalkorDB's score is the cosine distance); per vector, one document and a few ids
// are left out, and with r.bar the passages no more similar than it. Also the index's size
// bound (maxDocId: live passages plus orphaned vectors, which take places in an answer without
// being returned): a search that deep has seen everything, and one that came back short before
// it may ask again, deeper; and per vector the least similarity among the entries the index
// returned (left out or not): below r.bar, the search saw every passage above it. A vector
// whose every entry at this depth was an orphan gets no row.
// Grouped by r.i, not by r: grouping by a map that holds the vector cost FalkorDB 4.16 about
// 10 us a hit (10 vectors to depth 3,840 at 100k passages: 0.58 s, against 0.22 s with a bar).
CALL db.indexes() YIELD label, info
WITH label, info
WHERE label = 'Passage'
WITH info.maxDocId AS bound
// Each vector's values are taken from its row once, before the search, and the hits compared as
// distances (score < 1 - bar), nested so that only those past the bar read their node: 50
// vectors 2,048 deep at 1M passages, 0.95 s against 1.00 s (the search alone: 0.77 s).
UNWIND $rows AS r
WITH bound, r.i AS i, r.limit AS depth, vecf32(r.vector) AS vector,
     1.0 - coalesce(r.bar, -2.0) AS most, r.exclude_doc AS exclude_doc, r.exclude AS exclude
CALL db.idx.vector.queryNodes('Passage', 'embedding', depth, vector) YIELD node, score
WITH bound, i, 1.0 - max(score) AS lowest,
     collect(CASE WHEN score < most THEN CASE
       WHEN node.doc_id <> exclude_doc AND NOT node.id IN exclude
       THEN [node.id, 1.0 - score]
     END END) AS hits
RETURN i, bound, lowest, hits
