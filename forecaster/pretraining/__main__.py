"""``python -m forecaster.pretraining``: train the priors and write them into the package (seeded, reproducible)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from .corpus import FAMILIES
from .pretrain import pretrain, write_prior

SHIPPED = Path(__file__).resolve().parent.parent / "pretrained"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m forecaster.pretraining", description=__doc__)
    parser.add_argument("--family", choices=sorted(FAMILIES), action="append", help="prior(s) to train (default: all)")
    parser.add_argument("--steps", type=int, default=10000, help="training steps per prior (the shipped ones: 10000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic corpus and of training")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--out", type=Path, default=SHIPPED, help="folder of the priors (default: the package's own)")
    args = parser.parse_args(argv)
    for family in args.family or sorted(FAMILIES):
        model = pretrain(family, args.steps, args.seed, args.batch_size)
        write_prior(model, args.out / family)
        record = args.out / f"{family}.json"
        temp = record.with_suffix(".json.tmp")
        temp.write_text(json.dumps(model.pretraining_, indent=2) + "\n")
        os.replace(temp, record)
        print(json.dumps(model.pretraining_))


if __name__ == "__main__":
    main()
