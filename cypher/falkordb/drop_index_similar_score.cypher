// Set aside with the vector index when the server stops (FalkorStore): only the k-NN upkeep of
// writes reads edges by score, and a start loads the graph faster without it.
DROP INDEX FOR ()-[s:SIMILAR]-() ON (s.score)
