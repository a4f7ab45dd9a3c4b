// How many passages the caller may read (every passage for the admin): BM25's n for the
// caller's full-text ranking, as the sum of the readable documents' HAS_PASSAGE degrees (each
// passage has one; 34 ms at 1M passages, against 246 ms counting the edges one by one). kgp
// keeps it a little while per caller (GraphStore.readable_passages).
MATCH (d:Document)
WHERE $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
RETURN toInteger(sum(outdegree(d, 'HAS_PASSAGE'))) AS n
