// Set aside with the vector index when the server stops (FalkorStore): only writes look for
// NEEDS_KNN flags, and a start loads the graph faster without it.
DROP INDEX FOR ()-[f:NEEDS_KNN]-() ON (f.flag)
