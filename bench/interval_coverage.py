"""How often the report's 95% interval (clustered by task) covers the true accuracy, over synthetic runs.

Run: python bench/interval_coverage.py [RUNS] [TASKS]   (default 2,000 runs of 362 tasks, the published size)
Each run gives every task a success probability and draws K epochs of correct/incorrect from it. Two truths:
- population: each run draws its tasks' probabilities anew from a Beta(0.6, 0.8) distribution (mean 3/7),
  the accuracy being estimated is that of tasks like these, 3/7 (what a clustered interval is for);
- fixed tasks: one set of probabilities for every run, the truth their mean (the epochs vary, the tasks do
  not; a clustered interval also counts the tasks' own variation, so it is expected to be wide here).
Prints the share of runs whose interval covers the truth, and the mean interval width, for K = 1, 3, 5.
"""

from __future__ import annotations

import random
import sys

from harness.analysis.uncertainty import clustered_mean

ALPHA, BETA = 0.6, 0.8


def coverage(runs: int, tasks: int, epochs: int, fixed: list[float] | None, seed: int) -> tuple[float, float]:
    generator = random.Random(seed)
    covered, width = 0, 0.0
    for _ in range(runs):
        probabilities = fixed or [generator.betavariate(ALPHA, BETA) for _ in range(tasks)]
        truth = sum(fixed) / len(fixed) if fixed else ALPHA / (ALPHA + BETA)
        outcomes = {task: [generator.random() < p for _ in range(epochs)] for task, p in enumerate(probabilities)}
        estimate = clustered_mean(outcomes)
        covered += estimate.low <= truth <= estimate.high
        width += estimate.high - estimate.low
    return covered / runs, width / runs


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    tasks = int(sys.argv[2]) if len(sys.argv) > 2 else 362
    drawn = random.Random(1)
    fixed = [drawn.betavariate(ALPHA, BETA) for _ in range(tasks)]
    print(f"{runs} synthetic runs of {tasks} tasks; 95% interval clustered by task")
    print("epochs  truth        coverage  mean width (pp)")
    for epochs in (1, 3, 5):
        for name, probabilities in (("population", None), ("fixed tasks", fixed)):
            share, width = coverage(runs, tasks, epochs, probabilities, seed=epochs)
            print(f"{epochs:>6}  {name:<11}  {100 * share:7.1f}%  {100 * width:6.2f}")


if __name__ == "__main__":
    main()
