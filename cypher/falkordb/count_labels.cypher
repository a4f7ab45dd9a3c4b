// Nodes by label across the graph (kgp stats), for the admin or a caller who may read every
// document: no row when some document is hidden from the caller (then readable_labels counts
// what it may read). One query, so a document written meanwhile cannot slip in between the check
// and the counts. A caller's traces: readable_trace_counts.
MATCH (d:Document)
WHERE NOT ($caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups))
WITH count(d) AS hidden
WHERE hidden = 0
MATCH (n)
RETURN labels(n)[0] AS name, count(n) AS count
