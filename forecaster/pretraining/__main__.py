"""``python -m forecaster.pretraining``: train the priors (one member per seed) and write them into the package.

Seeded and reproducible: ``--seeds 0 1 2`` (the default) rebuilds the shipped weights; ``--workers 2`` trains two
seeds at a time, one core each. Every run also writes the table by which a fit recognises the corpus' M3 series
(``corpus_grams.npz``, ``model.prior_corpus``); ``--corpus-grams-only`` writes just that.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from .corpus import FAMILIES, write_corpus_grams
from .pretrain import SEEDS, pretrain_families, write_prior

SHIPPED = Path(__file__).resolve().parent.parent / "pretrained"


def main(argv: list[str] | None = None) -> None:
    # No abbreviations: ``--seed 0`` (the one-seed command of 0.8) must not train a one-member prior over the shipped ones.
    parser = argparse.ArgumentParser(prog="python -m forecaster.pretraining", description=__doc__, allow_abbrev=False)
    parser.add_argument("--family", choices=sorted(FAMILIES), action="append", help="prior(s) to train (default: all)")
    parser.add_argument("--steps", type=int, default=10000, help="training steps per prior (the shipped ones: 10000)")
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=list(SEEDS), help="one member per seed: its synthetic corpus and weights"
    )
    parser.add_argument("--workers", type=int, default=1, help="processes training seeds side by side (one core each)")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--out", type=Path, default=SHIPPED, help="folder of the priors (default: the package's own)")
    parser.add_argument("--corpus-grams-only", action="store_true", help="write only the table of the corpus' M3 series")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    write_corpus_grams(args.out / "corpus_grams.npz")
    if args.corpus_grams_only:
        return

    def write(family: str, model) -> None:
        write_prior(model, args.out / family)
        record = args.out / f"{family}.json"
        temp = record.with_suffix(".json.tmp")
        temp.write_text(json.dumps(model.pretraining_, indent=2) + "\n")
        os.replace(temp, record)
        print(json.dumps(model.pretraining_), flush=True)

    families = list(dict.fromkeys(args.family or sorted(FAMILIES)))  # a family named twice is trained once
    pretrain_families(families, args.steps, args.seeds, args.batch_size, args.workers, finished=write)


if __name__ == "__main__":
    main()
