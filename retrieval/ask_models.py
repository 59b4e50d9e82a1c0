"""What an `Asker` (retrieval.ask) loads once for every question: the sentence model's arm over the run's
English segments, the dense arm over the segment-state store, and the reader for the encoder; and the
scorer its evidence-sentence ranking reads (`sentence_similarity`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from retrieval.config import RetrievalConfig
from retrieval.encoder import checkpoint_file, load_encoder, sha256_file
from retrieval.evidence import ARM, SentenceArm, SentenceVectors, is_english
from retrieval.hybrid import HybridIndex
from retrieval.reader.runtime import READER_FILE, ReaderMismatch, load_reader
from retrieval.sentence_rank import KEY_SIMILARITY_WEIGHT, SIMILARITY_WEIGHT
from retrieval.store_arm import StoreArm, open_store_arm


def add_sentence_arm(
    index: HybridIndex, config: RetrievalConfig, device: str, index_dir: Path, sentences: SentenceVectors
) -> None:
    if not config.sentence_model:
        return
    arm = SentenceArm(index.passages, config, device, index_dir, sentences.vector)
    if len(arm):  # a Chinese-only run has nothing for it to search
        index.add_dense(ARM, arm)


def sentence_similarity(
    question: str, index: HybridIndex, sentences: SentenceVectors, config: RetrievalConfig
) -> tuple[Callable[[list[str]], np.ndarray] | None, float]:
    """(scorer, its weight) for ranking a question's evidence sentences: the sentence model's cosine for
    English, the Transformer-XL keys' for Chinese (`sentence_keys`, where the run's dense arm loaded); None
    where neither applies."""
    if is_english(question, config):
        return sentences.similarity(question), SIMILARITY_WEIGHT
    arm = index.dense.get("txl")
    if config.sentence_keys and isinstance(arm, StoreArm):
        return arm.similarity(question), KEY_SIMILARITY_WEIGHT
    return None, SIMILARITY_WEIGHT


def add_dense_arm(
    index: HybridIndex,
    config: RetrievalConfig,
    checkpoint: str | None,
    device: str,
    index_dir: Path,
    notes: list[str],
) -> tuple[object, object]:
    """Adds the segment-state store's arm when its encoder loads; (model, tokenizer), or (None, None)."""
    if not config.dense:
        return None, None
    arm = open_store_arm(index_dir, config, checkpoint, device, index.passages, notes)
    if arm is None:
        return None, None
    index.add_dense("txl", arm)
    return arm.model, arm.tokenizer


def load_asker_reader(
    checkpoint: str | None,
    device: str,
    reader_file: Path | None,
    notes: list[str],
    encoder: tuple[object, object],
) -> tuple[object, object, object]:
    """(reader, model, tokenizer): the reader head for this encoder, the one given (refused with an error
    when it was trained on another encoder), else the shipped one (left out with a note in that case);
    `encoder` is the (model, tokenizer) loaded already, if any."""
    model, tokenizer = encoder
    path = checkpoint_file(checkpoint)
    if path is None or not path.is_file():
        return None, model, tokenizer
    if reader_file is not None and not reader_file.is_file():
        raise ReaderMismatch(str(reader_file), "no such reader checkpoint")
    file = reader_file or READER_FILE
    if not file.is_file():
        return None, model, tokenizer
    try:
        reader = load_reader(file, None, None, sha256_file(path))
    except ReaderMismatch as e:
        if reader_file is not None:
            raise
        notes.append(f"reader not used: {e}")
        return None, model, tokenizer
    if model is None:
        model, tokenizer = load_encoder(path, device)
    return reader.attach(model, tokenizer), model, tokenizer
