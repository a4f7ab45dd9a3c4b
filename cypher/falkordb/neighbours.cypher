// The neighbourhood N(v) of many passages in one query: SIMILAR (either direction, best
// first), NEXT (before and after) and shared keywords (most shared first), at most $limit per
// source and kind; $kinds picks the edge kinds. One store call per traversal hop.
// Access: sources and targets are passages of documents the caller may read ($caller_groups;
// $caller_reads_all: all), and a keyword is expanded when the passages the caller may read
// that carry it are at most $max_df, so what the caller cannot read changes nothing: they are
// counted up to the cap (LIMIT inside the subquery stops the scan of a common keyword there).
// For a caller reading all that count is the keyword's df: keywords over the cap skipped at once.
// (In the keyword branch, the WITH before the df filter keeps FalkorDB's planner starting from
// the id index instead of scanning every Keyword: 23 ms instead of 380 ms for 30 passages.)
UNWIND $ids AS id
WITH id
WHERE 'similar' IN $kinds
MATCH (s:Passage {id: id})
OPTIONAL MATCH (sd:Document {id: s.doc_id})
WITH s, sd
WHERE $caller_reads_all OR any(g IN coalesce(sd.groups, []) WHERE g IN $caller_groups)
MATCH (s)-[r:SIMILAR]-(t:Passage)
OPTIONAL MATCH (td:Document {id: t.doc_id})
WITH s, r, t, td
WHERE $caller_reads_all OR any(g IN coalesce(td.groups, []) WHERE g IN $caller_groups)
WITH s.id AS source, t.id AS target, max(r.score) AS weight
ORDER BY source, weight DESC, target
WITH source, collect({target: target, weight: weight})[0..$limit] AS hits
UNWIND hits AS hit
RETURN 'similar' AS kind, source, hit.target AS target, hit.weight AS weight
UNION ALL
UNWIND $ids AS id
WITH id
WHERE 'next' IN $kinds
MATCH (s:Passage {id: id})
OPTIONAL MATCH (sd:Document {id: s.doc_id})
WITH s, sd
WHERE $caller_reads_all OR any(g IN coalesce(sd.groups, []) WHERE g IN $caller_groups)
MATCH (s)-[:NEXT]-(t:Passage)
WITH s.id AS source, t.id AS target
ORDER BY source, target
RETURN 'next' AS kind, source, target, 1.0 AS weight
UNION ALL
UNWIND $ids AS id
WITH id
WHERE 'keyword' IN $kinds
MATCH (s:Passage {id: id})
OPTIONAL MATCH (sd:Document {id: s.doc_id})
WITH s, sd
WHERE $caller_reads_all OR any(g IN coalesce(sd.groups, []) WHERE g IN $caller_groups)
MATCH (s)-[:HAS_KEYWORD]->(k:Keyword)
WITH s, k
WHERE k.df <= $max_df OR NOT $caller_reads_all
CALL {
  WITH s, k
  MATCH (k)<-[:HAS_KEYWORD]-(t:Passage)<-[:HAS_PASSAGE]-(td:Document)
  WHERE t <> s AND ($caller_reads_all OR any(g IN coalesce(td.groups, []) WHERE g IN $caller_groups))
  WITH t
  LIMIT $max_df
  RETURN collect(t) AS readable
}
WITH s, k, readable
WHERE size(readable) < $max_df
UNWIND readable AS t
WITH s.id AS source, t.id AS target, count(k) AS shared
ORDER BY source, shared DESC, target
WITH source, collect({target: target, weight: shared})[0..$limit] AS hits
UNWIND hits AS hit
RETURN 'keyword' AS kind, source, hit.target AS target, toFloat(hit.weight) AS weight
