"""retrieval.eval: measuring the retrieval subsystem. `search` (hybrid search on the CLCR layout), `qa`
(the reader on SQuAD-2.0-layout files), `cuad` (contract clauses), `metrics` (their shared scores)."""
