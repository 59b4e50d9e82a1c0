"""retrieval.predict: the analyst predictions of `ldx run` and the heads behind them.

Modules: `stage` (the predict stage: roles, articles, consistency, provisos, duplicates, connective
attention), `config` (PredictConfig, where the shipped heads live), `heads` (the TF-IDF / dual-tower
article and role heads), `train` (their corpora, training and evaluation), `role_states` (the
Transformer-XL states the role head's towers read), `dedup` (MinHash near-duplicates).
"""
