"""sentence-transformers, run by tests/as_torch/test_sentence_transformers.py with the real
torch and under ``python -m ptcore.as_torch``: a tiny BERT (random configuration, weights from
NumPy, dropout 0) and a word-piece vocabulary written here -- nothing is downloaded -- as a
bi-encoder (mean/CLS/max pooling, normalisation, similarity, semantic search, paraphrase
mining, save and load), trained a few steps with its losses, as a cross-encoder and as a
SPLADE sparse encoder.  Each case writes what it computed to ``<out>/<case>.json``.
"""
import os
import sys
import tempfile
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

WORDS = ("the a cat dog sat on mat rug ran fast slow quick brown fox jumps over lazy "
         "red blue car road city night day sun moon is was and of in").split()
SENTENCES = ["the cat sat on the mat", "a dog sat on the rug", "the quick brown fox jumps",
             "a car ran fast on the road", "the sun is red", "the moon was blue in the night",
             "a lazy dog", "the city of night and day"]


def _bert_dir(root, head=None, seed=0):
    """Write a tiny BERT (``head``: None, "mlm" or "cls") and its tokenizer to ``root``."""
    import transformers
    os.makedirs(root, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
    with open(os.path.join(root, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")
    tok = transformers.BertTokenizerFast(os.path.join(root, "vocab.txt"))
    tok.save_pretrained(root)
    config = transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, num_labels=1)
    cls = {None: transformers.BertModel, "mlm": transformers.BertForMaskedLM,
           "cls": transformers.BertForSequenceClassification}[head]
    model = cls(config)
    fill_normal([p for _, p in sorted(model.state_dict().items())], seed, 0.2)
    model.save_pretrained(root)
    return root


def _encoder(root, pooling="mean", normalize=True):
    from sentence_transformers import SentenceTransformer, models
    transformer = models.Transformer(root, max_seq_length=16)
    modules = [transformer, models.Pooling(transformer.get_word_embedding_dimension(),
                                           pooling_mode=pooling)]
    if normalize:
        modules.append(models.Normalize())
    return SentenceTransformer(modules=modules, device="cpu")


def encode_case():
    from sentence_transformers import util
    res = {}
    with tempfile.TemporaryDirectory() as d:
        root = _bert_dir(os.path.join(d, "bert"))
        for pooling in ("mean", "cls", "max"):
            model = _encoder(root, pooling, normalize=pooling == "mean")
            res[pooling] = model.encode(SENTENCES, batch_size=3, convert_to_tensor=True)
        model = _encoder(root)
        emb = res["mean"]
        res["numpy"] = model.encode(SENTENCES[:2])
        res["similarity"] = model.similarity(emb[:3], emb)
        res["dot"] = util.dot_score(emb[:2], emb)
        res["search"] = [[(h["corpus_id"], h["score"]) for h in hits]
                         for hits in util.semantic_search(emb[:2], emb, top_k=3)]
        res["mining"] = [list(m) for m in util.paraphrase_mining(model, SENTENCES, top_k=2)]
        res["tokens"] = model.tokenize(SENTENCES[:2])["input_ids"]
        res["dim"] = model.get_sentence_embedding_dimension()
        out = os.path.join(d, "saved")
        model.save(out)
        from sentence_transformers import SentenceTransformer
        reloaded = SentenceTransformer(out, device="cpu")
        res["reloaded"] = reloaded.encode(SENTENCES[:3], convert_to_tensor=True)
        res["reloaded_modules"] = [type(m).__name__ for m in reloaded]
        from sentence_transformers.quantization import quantize_embeddings
        res["binary"] = quantize_embeddings(res["numpy"], precision="ubinary")
    return res


def train_case():
    """A few optimizer steps with several losses on batches of pairs and triplets.  (SGD: the
    attention key biases, and for distance losses the last LayerNorm's bias, have gradients
    that are zero but for rounding, which Adam would turn into whole learning-rate steps that
    differ between any two implementations.)"""
    from sentence_transformers import losses
    rng = np.random.default_rng(1)
    res = {}
    with tempfile.TemporaryDirectory() as d:
        root = _bert_dir(os.path.join(d, "bert"), seed=2)
        anchors, positives = SENTENCES[:4], SENTENCES[4:]
        negatives = SENTENCES[2:6]
        labels = torch.from_numpy(rng.random(4).astype(np.float32))
        for name in ("cosine", "mnrl", "triplet", "contrastive", "cosent", "matryoshka"):
            model = _encoder(root, normalize=False)
            model.train()
            if name == "cosine":
                loss_fn, batch, y = losses.CosineSimilarityLoss(model), [anchors, positives], labels
            elif name == "mnrl":
                loss_fn = losses.MultipleNegativesRankingLoss(model)
                batch, y = [anchors, positives, negatives], None
            elif name == "triplet":
                loss_fn = losses.TripletLoss(model)
                batch, y = [anchors, positives, negatives], None
            elif name == "contrastive":
                loss_fn, batch = losses.ContrastiveLoss(model), [anchors, positives]
                y = torch.tensor([1, 0, 1, 0])
            elif name == "cosent":
                loss_fn, batch, y = losses.CoSENTLoss(model), [anchors, positives], labels
            else:
                loss_fn = losses.MatryoshkaLoss(model, losses.MultipleNegativesRankingLoss(model),
                                                matryoshka_dims=[32, 16, 8])
                batch, y = [anchors, positives], None
            opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            values = []
            for _ in range(3):
                opt.zero_grad()
                features = [model.tokenize(texts) for texts in batch]
                loss = loss_fn(features, y)
                loss.backward()
                opt.step()
                values.append(loss.item())
            model.eval()
            res[name] = {"losses": values,
                         "after": model.encode(SENTENCES[:2], convert_to_tensor=True)}
    return res


def cross_sparse_case():
    from sentence_transformers import CrossEncoder, SparseEncoder
    from sentence_transformers.sparse_encoder.models import MLMTransformer, SpladePooling
    res = {}
    with tempfile.TemporaryDirectory() as d:
        root = _bert_dir(os.path.join(d, "ce"), head="cls", seed=3)
        ce = CrossEncoder(root, device="cpu", max_length=32)
        pairs = [(SENTENCES[0], s) for s in SENTENCES[1:5]]
        res["scores"] = ce.predict(pairs, batch_size=2)
        res["rank"] = [(r["corpus_id"], r["score"]) for r in ce.rank(SENTENCES[0], SENTENCES[1:])]
        mlm = _bert_dir(os.path.join(d, "mlm"), head="mlm", seed=4)
        sparse = SparseEncoder(modules=[MLMTransformer(mlm, max_seq_length=16),
                                        SpladePooling(pooling_strategy="max")], device="cpu")
        emb = sparse.encode(SENTENCES[:3], convert_to_tensor=True,
                            convert_to_sparse_tensor=False)
        # (the sparse result: a torch.sparse COO tensor, which the encoder checks is a Tensor)
        sp = sparse.encode(SENTENCES[:3], convert_to_tensor=True)
        res["sparse_result_is_sparse_tensor"] = [isinstance(sp, torch.Tensor), sp.is_sparse]
        res["sparse_result"] = sp.to_dense()
        res["sparse_result_similarity"] = sparse.similarity(sp, sp)
        res["sparse"] = emb
        res["sparse_similarity"] = sparse.similarity(emb, emb)
        res["active_dims"] = (emb > 0).sum(1)
        decoded = sparse.decode(emb[0], top_k=3)
        res["decoded"] = [[tok for tok, _ in decoded], [w for _, w in decoded]]
    return res


CASES = {"encode": encode_case, "train": train_case, "cross_sparse": cross_sparse_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
