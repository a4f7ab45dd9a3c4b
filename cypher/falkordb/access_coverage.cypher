// Whether the caller may read every document, and the version of the graph's record of the
// group sets its documents hold (Meta.access_sets: each set its names joined by commas, every set
// in use and perhaps some no longer; Meta.access_version grows with every change of it). A
// caller holding a group of every set reads all: its retrieval may skip the document checks,
// and keeps what it read only if the version is the same when it ends (see
// kgp.stores.coverage). No set and no group name comes back: only the answer and the
// version. A graph without the record (written before it), or whose schema an older kgp set
// back (its writes keep no record), reads all for no caller.
OPTIONAL MATCH (m:Meta {id: 'kgp'})
RETURN m.access_version AS version,
       coalesce(m.schema >= 5 AND m.access_sets IS NOT NULL AND
                all(s IN m.access_sets WHERE any(g IN split(s, ',') WHERE g IN $caller_groups)),
                false) AS reads_all
