// Nodes by label for a caller who may read every document (kgp stats with groups): the graph's
// own counts, read without a filter per node, and no row when some document is hidden from the
// caller (then readable_labels counts what it may read). One query, so a document written
// meanwhile cannot slip in between the check and the counts. Traces: readable_trace_counts.
MATCH (d:Document)
WHERE NOT ($caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups))
WITH count(d) AS hidden
WHERE hidden = 0
MATCH (n)
RETURN labels(n)[0] AS name, count(n) AS count
