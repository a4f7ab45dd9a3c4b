// kgp: remove every saved trace and its STEP relationships (documents are not touched).
MATCH ()-[s:STEP]->()
DELETE s
WITH count(*) AS steps
MATCH (t:Trace)
DETACH DELETE t
