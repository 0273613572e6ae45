"""Cause accuracy of the harness's feedback on the labelled set of broken kernels.

Judges every case of tests/harness/diagnosis_set/manifest.yaml with the real harness and compares
the diagnosed cause (`Verdict.diagnosis["cause"]`; "correct" for a passing verdict; "none" when a
failure carries no diagnosis) with the case's expected class for the backend. Reports the
accuracy per expected class, a confusion table (expected × diagnosed), and whether the first
knowledge-base entry offered for the verdict (`KnowledgeInjector.verdict_fixes`) is the case's
entry. Writes <out>/feedback-<backend>.md and .json.

    python benchmarks/feedback_diagnosis.py                     # interpreter, preset small
    python benchmarks/feedback_diagnosis.py --backend cuda      # the GPU column, preset small

The expectations are for preset `small` (e.g. a grid of n // BLOCK only misses elements when n is
not a multiple of BLOCK, which the full sizes often are).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path

import yaml

from atrl.errors import UsageError
from atrl.harness.api import Harness
from atrl.harness.verdict import Verdict
from atrl.kb.inject import KnowledgeInjector

ROOT = Path(__file__).resolve().parents[1]
SET_DIR = ROOT / "tests" / "harness" / "diagnosis_set"


def load_manifest(set_dir: Path) -> list[dict]:
    cases = yaml.safe_load((set_dir / "manifest.yaml").read_text())["cases"]
    for case in cases:
        case["source"] = (set_dir / f"{case['case']}.py").read_text()
    return cases


def diagnosed(verdict: Verdict) -> str:
    if verdict.ok:
        return "correct"
    return (verdict.diagnosis or {}).get("cause", "none")


def kb_first(injector: KnowledgeInjector, verdict: Verdict) -> str | None:
    if verdict.ok:
        return None
    fixes = injector.verdict_fixes(verdict)
    return fixes[0].id if fixes else None


def judge_set(cases: list[dict], backend: str, preset: str | None, workers: int | None,
              trials: int, seed: int = 0) -> tuple[list[dict], str, float]:
    started = time.perf_counter()
    with Harness(backend=backend, workers=workers, trials=trials, preset=preset, use_cache=False,
                 timed_calls=1, warmup_calls=0, seed=seed) as harness:
        verdicts = harness.evaluate_many([(c["task"], c["source"]) for c in cases])
        injector = KnowledgeInjector(harness.backend.platform)
        name = harness.backend.name
    rows = []
    for case, verdict in zip(cases, verdicts, strict=True):
        expected = case["expected"][name]
        got = diagnosed(verdict)
        entry = kb_first(injector, verdict)
        rows.append({"case": case["case"], "task": case["task"], "planted": case["planted"], "expected": expected,
                     "diagnosed": got, "right": got == expected, "error_class": verdict.error_class,
                     "detail": (verdict.diagnosis or {}).get("detail", ""),
                     "kb_expected": None if expected == "correct" else case["kb_entry"], "kb_first": entry,
                     "kb_right": None if expected == "correct" else entry == case["kb_entry"],
                     "feedback": verdict.feedback})
    return rows, name, time.perf_counter() - started


def summarise(rows: list[dict]) -> dict:
    per_class: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        per_class[row["expected"]].append(row["right"])
    confusion = Counter((row["expected"], row["diagnosed"]) for row in rows)
    kb = [row["kb_right"] for row in rows if row["kb_right"] is not None]
    return {
        "cases": len(rows), "right": sum(row["right"] for row in rows),
        "accuracy": sum(row["right"] for row in rows) / len(rows),
        "per_class": {k: {"cases": len(v), "right": sum(v), "accuracy": sum(v) / len(v)}
                      for k, v in sorted(per_class.items())},
        "confusion": {f"{e} -> {d}": n for (e, d), n in sorted(confusion.items())},
        "kb_checked": len(kb), "kb_right": sum(kb), "kb_accuracy": sum(kb) / len(kb) if kb else None,
    }


def markdown(rows: list[dict], summary: dict, backend: str, seconds: float, command: str) -> str:
    lines = [f"# Feedback diagnosis on the {backend} backend", "", f"Command: `{command}`", "",
             f"{summary['right']}/{summary['cases']} causes right ({summary['accuracy']:.1%}); knowledge-base entry "
             f"right for {summary['kb_right']}/{summary['kb_checked']} failed verdicts; {seconds:.0f} s.", "",
             "| expected class | cases | right | accuracy |", "|---|---:|---:|---:|"]
    for name, item in summary["per_class"].items():
        lines.append(f"| {name} | {item['cases']} | {item['right']} | {item['accuracy']:.0%} |")
    labels = sorted({r["expected"] for r in rows} | {r["diagnosed"] for r in rows})
    lines += ["", "Confusion (rows: expected, columns: diagnosed)", "",
              "| expected \\ diagnosed | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    for expected in sorted({r["expected"] for r in rows}):
        counts = Counter(r["diagnosed"] for r in rows if r["expected"] == expected)
        lines.append(f"| {expected} | " + " | ".join(str(counts.get(label, "")) for label in labels) + " |")
    wrong = [r for r in rows if not r["right"] or r["kb_right"] is False]
    if wrong:
        lines += ["", "Misses", "", "| case | expected | diagnosed | error class | kb first (expected) |",
                  "|---|---|---|---|---|"]
        lines += [f"| {r['case']} | {r['expected']} | {r['diagnosed']} | {r['error_class']} | "
                  f"{r['kb_first']} ({r['kb_expected']}) |" for r in wrong]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="interpreter", choices=("interpreter", "cuda"))
    parser.add_argument("--preset", default="small",
                        help="task size preset (default small on both backends: the set's expectations are for it)")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0, help="base seed of the inputs drawn")
    parser.add_argument("--set-dir", type=Path, default=SET_DIR)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks")
    parser.add_argument("--only", default=None, help="judge only cases whose name contains this")
    args = parser.parse_args()
    cases = load_manifest(args.set_dir)
    if args.only:
        cases = [c for c in cases if args.only in c["case"]]
    try:
        rows, backend, seconds = judge_set(cases, args.backend, args.preset, args.workers, args.trials, args.seed)
    except UsageError as exc:
        parser.exit(2, f"{exc}\n")
    summary = summarise(rows)
    command = "python benchmarks/feedback_diagnosis.py --backend " + args.backend + (
        f" --preset {args.preset}" if args.preset != "small" else "") + (f" --seed {args.seed}" if args.seed else "")
    text = markdown(rows, summary, backend, seconds, command)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"feedback-{backend}" + (f"-seed{args.seed}" if args.seed else "")
    (args.out / f"{stem}.md").write_text(text)
    (args.out / f"{stem}.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    print(text)


if __name__ == "__main__":
    main()
