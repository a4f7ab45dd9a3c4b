// Relationships by type for a caller who may read every document (kgp stats with groups): the
// graph's own counts, and no row when some document is hidden from the caller (then
// readable_relationships counts what it may read). Traces: readable_trace_counts.
MATCH (d:Document)
WHERE NOT ($caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups))
WITH count(d) AS hidden
WHERE hidden = 0
MATCH ()-[r]->()
RETURN type(r) AS name, count(r) AS count
