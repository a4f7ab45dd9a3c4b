// Every passage's vector key, in one row: what an index beside the graph is checked against.
MATCH (p:Passage)
RETURN collect(p.vkey) AS keys
