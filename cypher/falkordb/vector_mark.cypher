// The graph's vector key counter: every passage written so far has a key below it
// (kgp.stores.falkordb.vectors: an index beside the graph catches up with the keys from its own).
OPTIONAL MATCH (m:Meta {id: 'kgp'})
RETURN coalesce(m.next_vkey, 1) AS next
