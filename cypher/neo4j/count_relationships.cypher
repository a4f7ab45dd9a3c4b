// Relationships by type across the graph (kgp stats), for the admin or a caller who may read
// every document: no row when some document is hidden from the caller (then
// readable_relationships counts what it may read). A caller's traces: readable_trace_counts.
MATCH (d:Document)
WHERE NOT ($caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups))
WITH count(d) AS hidden
WHERE hidden = 0
MATCH ()-[r]->()
RETURN type(r) AS name, count(r) AS count
