"""CPU cost of one classification in process, and what batching texts into one pass would save.

    python bench/classify_cost.py [--against OTHER_CHECKOUT/.venv/bin/python] [--alternations 3]

Thread CPU time (not wall time: the machine is shared, and CPU time moves less with others' load) of
`engine.classify` on the fixed benchmark prompt and on MMLU-Pro question stems, one text per pass as
the service runs them. Each measurement runs in a child process; with `--against`, children of this
checkout and of the other one alternate, and the medians over the alternations give this / other
ratios. Then, for this checkout only: CPU per text when texts share one padded pass (batches of 1, 4,
8, 16), and how far a batch moves a text's embedding from its own pass (dynamic int8 quantisation
scales activations per tensor). Figures for docs/adr/0105.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "mmlu-pro" / "questions.csv"
FIXED = "What is the derivative of x squared times the sine of x?"  # bench/http.py's prompt
STEMS = 120
BATCHES = (1, 4, 8, 16)


def stems() -> list[str]:
    with DATA.open(newline="", encoding="utf-8") as handle:
        return [row["text"].split(" Options:")[0] for row in csv.DictReader(handle)][:STEMS]


def cpu_ms(run, reps: int = 1) -> list[float]:
    samples = []
    for _ in range(reps):
        started = time.thread_time()
        run()
        samples.append((time.thread_time() - started) * 1e3)
    return samples


def child(batching: bool) -> dict:
    from hexmcp.tools.classification import ClassificationConfig, ClassificationService

    service = ClassificationService.from_config(ClassificationConfig())
    asyncio.run(service.start())
    engine = service._engine
    texts = stems()
    cpu_ms(lambda: engine.classify(FIXED), 20)  # warm-up
    fixed = cpu_ms(lambda: engine.classify(FIXED), 300)
    varied = [cpu_ms(lambda t=t: engine.classify(t))[0] for t in texts]
    figures = {"fixed_median_ms": statistics.median(fixed), "varied_median_ms": statistics.median(varied),
               "varied_mean_ms": statistics.fmean(varied)}
    if batching:
        figures.update(batch_figures(engine.encoder, texts))
    service.shutdown()
    return figures


def batch_figures(encoder, texts: list[str]) -> dict:
    """Per text CPU at each batch size, for the stems as they are and for short prompts (their first
    sentence, at most 80 characters), each batch padded to its longest text."""
    import numpy as np

    figures = {}
    shorts = [text.split(".")[0][:80] for text in texts]
    for label, sample in (("stems", texts), ("short", shorts)):
        for size in BATCHES:
            per_text = []
            for start in range(0, 64, size):
                feed = encoder.tokenize(sample[start : start + size])
                per_text += [ms / size for ms in cpu_ms(lambda f=feed: encoder.forward(f), 3)]
            figures[f"batch_{size}_{label}_cpu_per_text_ms"] = statistics.median(per_text)
    alone = np.stack([encoder.forward(encoder.tokenize([t]))[0][0] for t in shorts[:16]])
    together = encoder.forward(encoder.tokenize(shorts[:16]))[0]
    return {**figures, "batch_16_short_max_embedding_shift": float(np.abs(alone - together).max())}


def run_child(python: str, batching: bool) -> dict:
    command = [python, str(Path(__file__).resolve()), "--child"] + (["--batching"] if batching else [])
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="PYTHON", help="another checkout's interpreter, alternated with this one")
    parser.add_argument("--alternations", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--batching", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.batching)))
        return 0
    sides = {"this": sys.executable, **({"other": args.against} if args.against else {})}
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    for _ in range(args.alternations):
        for side, python in sides.items():
            runs[side].append(run_child(python, batching=False))
    medians = {side: {key: statistics.median(r[key] for r in rs) for key in rs[0]} for side, rs in runs.items()}
    for side, figures in medians.items():
        print(side, "  ".join(f"{key} {value:.3f}" for key, value in figures.items()))
    if "other" in medians:
        print("this / other:", "  ".join(f"{key} {medians['this'][key] / medians['other'][key]:.2f}x"
                                         for key in medians["this"]))
    batching = run_child(sys.executable, batching=True)
    print("one padded pass for several texts:", "  ".join(f"{k} {v:.3f}" for k, v in batching.items()
                                                          if k.startswith("batch_")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
