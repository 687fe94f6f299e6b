"""Write ``tiny_corpus.txt``: about 20 KB of original English-like text.

The text is produced from a small hand-written grammar with a fixed seed, so
the corpus is reproducible and has no third-party content.  Run
``python examples/data/make_corpus.py`` to regenerate it.
"""
import random
from pathlib import Path

SUBJECTS = ["the keeper", "a small fox", "the old river", "my neighbour", "the baker",
            "a quiet child", "the north wind", "the lighthouse", "every sailor", "the garden",
            "a grey cat", "the teacher", "the village", "a travelling poet", "the clock"]
VERBS = ["watches", "remembers", "carries", "follows", "paints", "counts", "greets",
         "forgets", "mends", "sings to", "waits for", "dreams of", "writes about"]
OBJECTS = ["the morning light", "a basket of apples", "the long road", "the harbour boats",
           "an open window", "the evening bells", "a letter from home", "the winter stars",
           "the slow tide", "a field of barley", "the silver moon", "a warm loaf of bread"]
PLACES = ["by the sea", "in the valley", "under the bridge", "near the mill",
          "at the edge of town", "on the hill", "beside the well", "in the quiet square"]
TIMES = ["at dawn", "every evening", "before the rain", "after supper", "in spring",
         "when the tide turns", "on market day", "late at night"]
CONNECT = ["and", "but", "while", "because", "so"]


def clause(rng):
    s = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
    r = rng.random()
    if r < 0.4:
        s += f" {rng.choice(PLACES)}"
    elif r < 0.7:
        s += f" {rng.choice(TIMES)}"
    return s


def sentence(rng):
    s = clause(rng)
    if rng.random() < 0.45:
        s += f" {rng.choice(CONNECT)} {clause(rng)}"
    return s[0].upper() + s[1:] + rng.choice([".", ".", ".", ".", "!", "?"])


def main(size=20_000, seed=1234):
    rng = random.Random(seed)
    paragraphs, total = [], 0
    while total < size:
        para = " ".join(sentence(rng) for _ in range(rng.randint(3, 6)))
        paragraphs.append(para)
        total += len(para) + 2
    text = "\n\n".join(paragraphs) + "\n"
    out = Path(__file__).with_name("tiny_corpus.txt")
    out.write_text(text, encoding="utf-8")
    return out, len(text)


if __name__ == "__main__":
    path, n = main()
    print(f"wrote {n} characters to {path}")
