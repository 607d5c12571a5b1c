"""The sentiment training's frozen-layer pass runs the encoder's layers one by one; the
mask it hands them comes from transformers' public masking utility (not the model's
private ``_create_attention_masks``) and must be the mask the model's forward builds."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from evaluation.train.sentiment import _mask  # noqa: E402


@pytest.mark.parametrize("impl", ["eager", "sdpa"])
def test_layers_with_the_public_mask_reproduce_the_forward(impl: str) -> None:
    torch.manual_seed(0)
    cfg = transformers.BertConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, attn_implementation=impl,
    )  # fmt: skip
    enc = transformers.BertModel(cfg).eval()
    ids = torch.randint(0, 50, (2, 5))
    am = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])  # padding in the first row
    with torch.inference_mode():
        h = enc.embeddings(input_ids=ids)
        mask = _mask(enc, am, h)
        for layer in enc.encoder.layer:
            h = layer(h, mask)
            h = h[0] if isinstance(h, tuple) else h
        want = enc(input_ids=ids, attention_mask=am).last_hidden_state
    real = am.bool()  # padded positions' states are never read (mean pooling masks them)
    assert torch.allclose(h[real], want[real], atol=1e-5)
