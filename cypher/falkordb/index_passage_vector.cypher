CREATE VECTOR INDEX FOR (p:Passage) ON (p.embedding)
OPTIONS {dimension: $dimension, similarityFunction: 'cosine', efRuntime: $ef_runtime, M: $m}
