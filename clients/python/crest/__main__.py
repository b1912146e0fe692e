"""python3 -m crest plot dff|vocab|design [crest flags] --out FILE.png|svg

Runs the crest command's answer (locally, --db FILE or --server HOST:PORT)
and draws it with matplotlib into FILE; the format follows the extension.
Example:
    python3 -m crest plot dff --hidden 4096 --gpu h100 --out dff.png
"""

from __future__ import annotations

import argparse
import sys

from crest import answers

_KINDS = ("dff", "vocab", "design")


def _parse(argv):
    parser = argparse.ArgumentParser(
        prog="python3 -m crest plot", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=_KINDS, help="which answer to plot")
    parser.add_argument("--out", required=True, help="the image to write (.png, .svg, .pdf)")
    parser.add_argument("--server", help="ask this crestd (HOST:PORT)")
    parser.add_argument("--title", help="replace the plot's title")
    return parser.parse_known_args(argv)


def plot(argv) -> int:
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt  # noqa: PLC0415

    args, crest_flags = _parse(argv)
    if not args.out.lower().endswith((".png", ".svg", ".pdf")):
        print(f"crest plot: error: out: '{args.out}' must end in .png, .svg or .pdf",
              file=sys.stderr)
        return 2
    try:
        doc = answers.run_crest([args.kind, *crest_flags], server=args.server)
    except answers.CrestCommandError as e:
        print(e.message, file=sys.stderr)
        return e.code
    answer = {"dff": answers.dff_from_json, "vocab": answers.vocab_from_json,
              "design": answers.design_from_json}[args.kind](doc)
    ax = answer.plot()
    if args.title:
        ax.set_title(args.title)
    ax.figure.savefig(args.out, dpi=120)
    plt.close(ax.figure)
    print(f"wrote {args.out}: {len(answer)} {args.kind} rows "
          f"({', '.join(sorted({str(r.source) for r in answer}))})")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "plot":
        print("usage: python3 -m crest plot dff|vocab|design [crest flags] --out FILE",
              file=sys.stderr)
        return 2
    return plot(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
