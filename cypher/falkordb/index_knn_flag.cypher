CREATE INDEX FOR ()-[f:NEEDS_KNN]-() ON (f.flag)
