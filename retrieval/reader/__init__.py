"""retrieval.reader: the extractive reader. `runtime` answers with a trained head (what `ldx ask`
loads); `train` fits the head on cached encoder states."""
