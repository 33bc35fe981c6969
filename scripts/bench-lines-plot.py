#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One figure per kernel line across benchmark runs (sfp bench-lines --plot).

Reads, on standard input, the JSON that sfp_benchlines.plot_data() makes
({line: {mode: {kernel: {metric: [value per repetition]}}}}) and writes
OUTDIR/bench-lines-LINE.png: for each of the three headline metrics a
panel with, per newly-idle mode, baseline's and patched's value in every
repetition (dots) and their median (a bar). Needs Debian's matplotlib.
"""
import argparse
import json
import pathlib
import statistics
import sys

PANELS = (("attempts", "newly-idle attempts per idle entry (rr)", True),
          ("wasted", "wasted newly-idle balances per idle entry (rr)", True),
          ("pulls", "tasks pulled by newly-idle balancing (mix)", False))
COLOURS = {"baseline": "tab:red", "patched": "tab:blue"}


def figure(line: str, modes: dict, out: pathlib.Path) -> None:
    # Imported here: --help works without matplotlib.
    import matplotlib  # pylint: disable=import-outside-toplevel

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    fig, axes = plt.subplots(1, len(PANELS), figsize=(4.2 * len(PANELS), 3.6))
    names = sorted(modes)
    for ax, (metric, title, log) in zip(axes, PANELS):
        for i, mode in enumerate(names):
            for j, kernel in enumerate(("baseline", "patched")):
                vals = [v for v in modes[mode].get(kernel, {}).get(metric, []) if v is not None]
                if not vals:
                    continue
                x = i * 3 + j
                if log:
                    vals = [max(v, 1e-4) for v in vals]
                ax.bar(x, statistics.median(vals), color=COLOURS[kernel], alpha=0.35,
                       label=kernel if i == 0 else None)
                ax.plot([x] * len(vals), vals, "o", color=COLOURS[kernel], markersize=4)
        ax.set_xticks([i * 3 + 0.5 for i in range(len(names))], names)
        ax.set_title(title, fontsize=9)
        if log:
            ax.set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{line}: newly-idle modes (bars: medians; dots: repetitions)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / f"bench-lines-{line}.png", dpi=90)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", help="where the PNG files go")
    args = ap.parse_args()
    out = pathlib.Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    data = json.load(sys.stdin)
    for line, modes in sorted(data.items()):
        figure(line, modes, out)
        print(out / f"bench-lines-{line}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
