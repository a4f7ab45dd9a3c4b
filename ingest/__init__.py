"""kgp.ingest: readers, splitting, keywords, embeddings, edges and folder sync."""
