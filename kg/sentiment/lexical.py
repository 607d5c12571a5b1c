"""A lexical classifier: hashed word 1-2-grams and character 2-5-grams, tf-idf, logistic
regression. Cheap (sparse, no model) and complementary to the encoder: it remembers
exact finance phrasing ("cut to neutral", "price target raised") that mean-pooled
embeddings blur. Hashing means no vocabulary, hence no text from the training data,
is stored in the artifact: only per-bucket idf weights and coefficients.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kg.models import heavy

N_FEATURES = 2**17  # per analyzer
MODEL_ID = "hash-tfidf+logreg@v1"


def _vectorizers():  # type: ignore[no-untyped-def]
    hashing_vectorizer = heavy.sklearn_features().feature_extraction.text.HashingVectorizer
    words = hashing_vectorizer(
        ngram_range=(1, 2), n_features=N_FEATURES, alternate_sign=False, norm=None
    )
    chars = hashing_vectorizer(
        analyzer="char_wb",
        ngram_range=(2, 5),
        n_features=N_FEATURES,
        alternate_sign=False,
        norm=None,
    )
    return words, chars


def _counts(texts: Sequence[str]):  # type: ignore[no-untyped-def]
    words, chars = _vectorizers()
    return heavy.scipy_sparse().hstack([words.transform(texts), chars.transform(texts)]).tocsr()


def _tfidf(counts, idf: np.ndarray):  # type: ignore[no-untyped-def]
    x = counts.astype(np.float32)
    x.data = np.log(x.data) + 1.0  # sublinear tf
    x = x.multiply(idf).tocsr()
    return heavy.sklearn_features().preprocessing.normalize(x)


def fit(
    texts: Sequence[str], y: np.ndarray, c: float = 10.0, model_id: str = MODEL_ID
) -> dict[str, np.ndarray]:
    counts = _counts(texts)
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    n = counts.shape[0]
    idf = (np.log((1 + n) / (1 + df)) + 1.0).astype(np.float32)  # sklearn's smooth idf
    logistic_regression = heavy.sklearn_linear_model().LogisticRegression
    clf = logistic_regression(C=c, max_iter=3000).fit(_tfidf(counts, idf), y)
    return {
        "idf": idf.astype(np.float16),
        "coef": clf.coef_.astype(np.float16),
        "intercept": clf.intercept_.astype(np.float32),
        "meta.model_id": np.asarray(model_id),
        "meta.n_features": np.asarray(N_FEATURES),
        "meta.c": np.asarray(c),
    }


class LexicalClassifier:
    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.idf = arrays["idf"].astype(np.float32)
        self.coef = arrays["coef"].astype(np.float32)
        self.intercept = arrays["intercept"].astype(np.float32)
        self.model_id = str(np.asarray(arrays["meta.model_id"]).item())

    @classmethod
    def load(cls, path: Path) -> LexicalClassifier:
        data = np.load(path, allow_pickle=False)
        return cls({k: data[k] for k in data.files})

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 3), dtype=np.float32)
        x = _tfidf(_counts(list(texts)), self.idf)
        z = np.asarray(x @ self.coef.T) + self.intercept
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
