// kgp: saved traces, newest first (kgp retrieve --save-trace "...").
MATCH (t:Trace)
RETURN t.id AS trace, t.question AS question, t.scorer AS scorer, t.seeder AS seeder,
       t.created AS created, COUNT { (t)-[:RETRIEVED]->() } AS passages
ORDER BY created DESC
LIMIT 25
