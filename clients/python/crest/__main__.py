"""python3 -m crest plot dff|vocab|design|study [crest flags] --out FILE.png|svg|pdf

Runs the crest command's answer (locally, --db FILE or --server HOST:PORT)
and draws it with matplotlib into FILE; the format follows the extension.
`crest plot` runs this. study takes lists: --gpu h100,h200 --hidden
4096,8192 --tp 1,2 --pass fwd,train (and --ratio, --dtype, --window,
--tokens, --db); one panel per GPU and pass.
Examples:
    python3 -m crest plot dff --hidden 4096 --gpu h100 --out dff.png
    python3 -m crest plot study --gpu h100,a100 --hidden 4096 --pass fwd,train --out s.svg
"""

from __future__ import annotations

import argparse
import sys

from crest import answers

_KINDS = ("dff", "vocab", "design", "study")


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
    if args.kind == "study":
        return _study(args, crest_flags, plt)
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
    ax.figure.savefig(args.out, dpi=120, bbox_inches="tight")
    plt.close(ax.figure)
    print(f"wrote {args.out}: {len(answer)} {args.kind} rows "
          f"({', '.join(sorted({str(r.source) for r in answer}))})")
    return 0


def _study(args, flags, plt) -> int:
    """study's grid from its flags (comma lists), one panel per GPU and pass."""
    parser = argparse.ArgumentParser(prog="crest plot study")
    for name in ("--gpu", "--hidden"):
        parser.add_argument(name, required=True)
    for name, default in (("--tp", "1"), ("--pass", "fwd"), ("--ratio", "8/3"),
                          ("--dtype", "bf16")):
        parser.add_argument(name, default=default)
    parser.add_argument("--window", type=int, default=128)
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--db")
    grid = parser.parse_args(flags)

    def split(text, kind=str, name=""):
        try:
            return [kind(v) for v in text.split(",") if v]
        except ValueError:
            raise ValueError(f"{name}: '{text}' is not a list of integers (e.g. 4096,8192)") \
                from None

    try:
        frame = answers.study(gpu=split(grid.gpu), hidden=split(grid.hidden, int, "hidden"),
                              tp=split(grid.tp, int, "tp"), pass_=split(getattr(grid, "pass")),
                              ratio=split(grid.ratio), dtype=split(grid.dtype),
                              window=grid.window, tokens=grid.tokens, db=grid.db,
                              server=args.server)
    except answers.CrestCommandError as e:
        print(e.message, file=sys.stderr)
        return e.code
    except ValueError as e:
        print(f"crest plot: error: {e}", file=sys.stderr)
        return 2
    fig = answers.plot_study(frame, facet=["gpu", "pass"])
    if args.title:
        fig.suptitle(args.title)
    fig.savefig(args.out, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {args.out}: {len(frame)} study rows "
          f"({', '.join(sorted(set(frame['source'].astype(str))))})")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "plot":
        print("usage: python3 -m crest plot dff|vocab|design|study [crest flags] --out FILE",
              file=sys.stderr)
        return 2
    return plot(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
