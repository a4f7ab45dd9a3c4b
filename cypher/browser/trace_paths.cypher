// kgp: a question's reasoning paths: the trace, what it retrieved, and every traversal step
// (STEP relationships of this trace) between passages (set :param trace_id => "trace-...").
MATCH (t:Trace {id: $trace_id})-[r:RETRIEVED]->(x)
OPTIONAL MATCH step = (:Passage)-[s:STEP {trace: $trace_id}]->(x)
RETURN t, r, x, step
ORDER BY r.rank
