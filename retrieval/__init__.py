"""retrieval: the FAISS segment-state store, memory injection, hybrid search and cited answers."""
