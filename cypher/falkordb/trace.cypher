// One saved trace the caller may see (as list_traces decides), with what it retrieved that the
// caller may read now, by rank, and the steps of its reasoning paths between passages the
// caller may read: a saved question opened again. No row when the caller may not see it.
MATCH (t:Trace {id: $id})
WHERE $caller_admin
      OR (size(coalesce(t.groups, [])) > 0 AND all(g IN t.groups WHERE g IN $caller_groups))
CALL {
  WITH t
  OPTIONAL MATCH (t)-[r:RETRIEVED]->(x)
  WITH r, x
  WHERE x IS NOT NULL
  MATCH (d:Document {id: x.doc_id})
  WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
  WITH r, x, d
  ORDER BY r.rank
  RETURN collect({id: x.id, rank: r.rank, hop: r.hop, score: r.score, doc_id: x.doc_id,
                  title: d.title, page: x.page, table: labels(x)[0] = 'Table',
                  table_id: x.table_id, text: coalesce(x.text, x.markdown)}) AS items
}
CALL {
  WITH t
  OPTIONAL MATCH (a:Passage)-[s:STEP]->(b:Passage)
  WHERE s.trace = t.id
  WITH a, s, b
  WHERE s IS NOT NULL
  MATCH (da:Document {id: a.doc_id})
  MATCH (db:Document {id: b.doc_id})
  WHERE $caller_admin
        OR (any(g IN coalesce(da.groups, []) WHERE g IN $caller_groups)
            AND any(g IN coalesce(db.groups, []) WHERE g IN $caller_groups))
  RETURN collect({source: a.id, target: b.id, hop: s.hop}) AS steps
}
RETURN t.id AS id, t.question AS question, t.created AS created, t.scorer AS scorer,
       t.seeder AS seeder, items, steps
