"""Writes the sample corpus `gpuinfra dataprep run --local` runs on (templates/dataprep/sample/): seeded, so the
same files come out every time. English prose made from a small grammar, with planted faults the pipeline must
remove: exact and near duplicates of English documents (in another file, as crawls repeat pages) and documents in
German and French. Each record says what it is in `metadata.planted` (english, duplicate-of:<id>, german, french).

Run: python tools/dataprep_sample.py [OUT_DIR]
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "templates" / "dataprep" / "sample"
NOUNS = [
    "river",
    "valley",
    "farmer",
    "market",
    "engineer",
    "bridge",
    "library",
    "village",
    "teacher",
    "garden",
    "harbor",
    "mountain",
    "student",
    "museum",
    "kitchen",
    "railway",
    "doctor",
    "forest",
    "island",
    "bakery",
    "council",
    "orchard",
    "factory",
    "painter",
    "station",
    "lighthouse",
    "journal",
    "ferry",
    "canal",
    "meadow",
    "workshop",
    "archive",
    "festival",
    "tower",
    "street",
    "window",
    "carpenter",
    "fisherman",
    "merchant",
    "scholar",
    "harvest",
    "recipe",
    "lantern",
    "compass",
    "blanket",
    "engine",
    "ladder",
    "pottery",
]
ADJECTIVES = [
    "quiet",
    "old",
    "narrow",
    "busy",
    "bright",
    "careful",
    "patient",
    "wooden",
    "northern",
    "ancient",
    "gentle",
    "crowded",
    "modern",
    "rural",
    "sturdy",
    "curious",
    "humble",
    "famous",
    "distant",
    "generous",
]
VERBS = [
    "visited",
    "repaired",
    "described",
    "painted",
    "measured",
    "followed",
    "opened",
    "watched",
    "carried",
    "studied",
    "built",
    "remembered",
    "crossed",
    "cleaned",
    "explained",
    "welcomed",
]
PLACES = ["near", "beside", "behind", "across", "above", "below", "beyond", "toward"]
GERMAN = [
    "Der alte Bauer ging am Morgen über die Brücke und sah den Fluss im Tal",
    "Die Kinder spielten im Garten, während die Mutter das Brot in der Küche backte",
    "Im Dorf gibt es eine kleine Bibliothek, in der viele Bücher über die Geschichte der Region stehen",
    "Am Abend trafen sich die Nachbarn auf dem Marktplatz.",
]
FRENCH = [
    "Le vieux pêcheur est parti tôt le matin pour traverser la rivière avec son bateau",
    "Les enfants jouaient dans le jardin pendant que leur mère préparait le pain dans la cuisine",
    "Au village, il y a une petite bibliothèque où l'on trouve beaucoup de livres sur l'histoire de la région",
    "Le soir, les voisins se retrouvaient sur la place du marché.",
]


def sentence(rng: random.Random) -> str:
    a, b = rng.sample(NOUNS, 2)
    return (
        f"The {rng.choice(ADJECTIVES)} {a} {rng.choice(VERBS)} the {rng.choice(ADJECTIVES)} {b} "
        f"{rng.choice(PLACES)} the {rng.choice(NOUNS)} and the {rng.choice(NOUNS)} that we {rng.choice(VERBS)} "
        f"with the {rng.choice(NOUNS)}."
    )


def english(rng: random.Random) -> str:
    paragraphs = []
    for _ in range(rng.randint(4, 7)):
        paragraphs.append(" ".join(sentence(rng) for _ in range(rng.randint(3, 6))))
    return "\n\n".join(paragraphs)


def foreign(rng: random.Random, sentences: list[str]) -> str:
    lines = [rng.sample(sentences, len(sentences)) for _ in range(4)]
    return "\n\n".join(". ".join(s.rstrip(".") for s in group) + "." for group in lines)


def near(rng: random.Random, text: str) -> str:
    """The same page with one word changed (a crawl's second capture)."""
    words = text.split(" ")
    i = rng.randrange(len(words))
    words[i] = rng.choice(NOUNS)
    return " ".join(words)


def corpus(seed: int = 55) -> list[list[dict]]:
    rng = random.Random(seed)
    files: list[list[dict]] = [[], [], []]
    originals = []
    for i in range(240):
        doc = {"id": f"en-{i:04d}", "text": english(rng), "metadata": {"planted": "english"}}
        files[i % 3].append(doc)
        originals.append(doc)
    for i, source in enumerate(originals[:30]):
        exact = i % 2 == 0
        text = source["text"] if exact else near(rng, source["text"])
        kind = "exact" if exact else "near"
        files[(i + 1) % 3].append(
            {"id": f"dup-{i:04d}", "text": text, "metadata": {"planted": f"duplicate-of:{source['id']}", "kind": kind}}
        )
    for i in range(15):
        files[i % 3].append({"id": f"de-{i:04d}", "text": foreign(rng, GERMAN), "metadata": {"planted": "german"}})
        files[(i + 2) % 3].append(
            {"id": f"fr-{i:04d}", "text": foreign(rng, FRENCH), "metadata": {"planted": "french"}}
        )
    for docs in files:
        rng.shuffle(docs)
    return files


def write(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for n, docs in enumerate(corpus()):
        path = out / f"sample-{n:02d}.jsonl.gz"
        body = "".join(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n" for d in docs).encode()
        path.write_bytes(gzip.compress(body, mtime=0))
        paths.append(path)
    return paths


if __name__ == "__main__":
    for p in write(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(p, p.stat().st_size)
