"""Plots of Crest's answers with matplotlib (Debian's python3-matplotlib).

Each function draws TFLOP/s against the dimension the answer ranks, on a
given Axes or a new figure, and returns the Axes. Measured points are filled
circles, predicted ones hollow squares, mixed ones triangles, so the two
kinds of number are never mistaken for each other; the rows tied with the
best of their kind are ringed.
"""

from __future__ import annotations

from crest.types import Source

_STYLE = {
    Source.MEASURED: dict(marker="o", linestyle="none", color="tab:blue"),
    Source.PREDICTED: dict(marker="s", linestyle="none", markerfacecolor="none",
                           color="tab:orange"),
    Source.MIXED: dict(marker="^", linestyle="none", color="tab:green"),
}


def _axes(ax):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt  # noqa: PLC0415
    _, ax = plt.subplots(figsize=(10, 4.5), layout="constrained")
    return ax


def _by_source(rows):
    groups = {}
    for r in rows:
        groups.setdefault(r.source, []).append(r)
    return groups


def _points(ax, rows, x, y, label_of=str):
    """Scatter by source; ring the best tie group of each source."""
    for source, group in _by_source(rows).items():
        group = sorted(group, key=x)
        style = _STYLE.get(source, dict(marker="x", linestyle="none", color="gray"))
        ax.plot([x(r) for r in group], [y(r) for r in group],
                label=f"{label_of(source)} ({len(group)})", **style)
        best = min(r.tie_group for r in group)
        tied = [r for r in group if r.tie_group == best]
        ax.plot([x(r) for r in tied], [y(r) for r in tied], linestyle="none", marker="o",
                markersize=14, markerfacecolor="none", color="black", alpha=0.6,
                label=f"tied best, {label_of(source)} ({len(tied)})")


def _finish(ax, xlabel, ylabel, title):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    # Outside the axes, so it never covers a point.
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.grid(alpha=0.3)
    return ax


def plot_dff(answer, ax=None):
    ax = _axes(ax)
    _points(ax, answer, lambda r: r.d_ff, lambda r: r.tflops)
    ax.axvline(answer.baseline_d_ff, linestyle="--", color="gray",
               label=f"baseline {answer.baseline_d_ff}")
    q = getattr(answer, "query", None) or {}
    asked = f"h={q['hidden']}, {q['pass']} pass, " if "hidden" in q and "pass" in q else ""
    return _finish(ax, "d_ff", "SwiGLU MLP TFLOP/s",
                   f"d_ff at {asked}on {answer.gpu}: {answer.measured} measured, "
                   f"{answer.predicted} predicted of {answer.candidates}")


def plot_vocab(answer, ax=None):
    ax = _axes(ax)
    _points(ax, answer, lambda r: r.vocab, lambda r: r.train_tflops)
    ax.axvline(answer.baseline, linestyle="--", color="gray", label=f"baseline {answer.baseline}")
    return _finish(ax, "padded vocabulary", "logits GEMM TFLOP/s (fwd + gradients)",
                   f"vocabulary {answer.vocab} padded, on {answer.gpu}")


def plot_design(answer, ax=None, label_top: int = 5):
    """Parameters against model TFLOP/s per GPU (equal work across sizes); the top
    `label_top` rows labelled; configurations that break a rule (memory, most often)
    shown apart at the foot of the axes; the legend outside."""
    ax = _axes(ax)
    _points(ax, answer, lambda r: r.params / 1e9, lambda r: r.model_tflops_per_gpu)
    # The top rows by rank number at their points, what each is in a list
    # outside the axes (labels at the points collide where the best crowd).
    top = sorted(answer, key=lambda r: -r.model_tflops_per_gpu)[:label_top]
    for i, r in enumerate(top, 1):
        ax.annotate(str(i), (r.params / 1e9, r.model_tflops_per_gpu), fontsize=8,
                    fontweight="bold", xytext=(0, 7), textcoords="offset points", ha="center")
    if top:
        listing = "\n".join(f"{i}: h{r.hidden} L{r.layers} a{r.heads}/{r.kv_heads} "
                            f"f{r.d_ff} b{r.micro_batch}, {r.model_tflops_per_gpu:.0f} TF/s"
                            for i, r in enumerate(top, 1))
        ax.text(1.01, 0.0, listing, transform=ax.transAxes, fontsize=7, va="bottom",
                ha="left", family="monospace")
    broken = [b for b in answer.broken if "params" in b]
    if broken:
        ax.plot([b["params"]["total"] / 1e9 for b in broken], [0] * len(broken),
                linestyle="none", marker="x", color="tab:red",
                label=f"breaks a rule ({len(broken)})")
    ax.axhline(answer.peak_tflops, linestyle="--", color="gray",
               label=f"datasheet peak {answer.peak_tflops:.0f}")
    return _finish(ax, "parameters [billions]", "model TFLOP/s per GPU (predicted step)",
                   f"model designs on {answer.gpu}, ranked by {answer.rank_by}")


# Alignment classes of d_ff/tp by their largest power-of-two divisor: what
# decides the kernel family (16-byte rows and wider run the fast kernels).
_CLASSES = ((1, "odd (2 B rows)", "tab:red"), (2, "2 mod 4 (4 B)", "tab:orange"),
            (4, "4 mod 8 (8 B)", "tab:olive"), (8, "multiple of 8", "tab:blue"),
            (64, "multiple of 64", "tab:purple"))
_MARKERS = {"measured": "o", "predicted": "s", "mixed": "^", "replayed": "D"}


def _class_of(pow2: int):
    chosen = _CLASSES[0]
    for c in _CLASSES:
        if pow2 >= c[0]:
            chosen = c
    return chosen


def plot_study(frame, *, facet="gpu", axes=None):
    """study()'s frame: one panel per value of `facet` (a column, or a list of
    columns: a panel per combination, e.g. ["gpu", "pass"]), TFLOP/s against
    d_ff, colour by alignment class, marker by source (filled measured,
    hollow predicted), the baseline dashed; one legend for the figure,
    outside the panels. Returns the figure."""
    import matplotlib.pyplot as plt  # noqa: PLC0415
    facets = [facet] if isinstance(facet, str) else list(facet)
    for name in facets:
        if name not in frame.columns:
            raise ValueError(f"facet: '{name}' is not a column of the frame "
                             f"({', '.join(map(str, frame.columns))})")
    keys = list(zip(*(frame[name] for name in facets)))
    values = list(dict.fromkeys(keys))
    if axes is None:
        # The last 2.5 inches hold the legend, right of the panels.
        width = 5 * len(values) + 2.5
        fig, axes = plt.subplots(1, len(values), figsize=(width, 4.2), squeeze=False,
                                 sharey=True)
        fig.subplots_adjust(left=0.6 / width, right=1 - 2.6 / width, wspace=0.08, bottom=0.14)
        axes = axes[0]
    fig = axes[0].figure
    handles = {}
    for ax, value in zip(axes, values):
        panel = frame[[k == value for k in keys]]
        for (pow2_class, source), group in panel.groupby(
                [panel["pow2"].map(lambda p: _class_of(int(p))[0]), panel["source"].astype(str)]):
            _, label, color = _class_of(int(pow2_class))
            marker = _MARKERS.get(source, "x")
            filled = source == "measured"
            h, = ax.plot(group["d_ff"], group["tflops"], linestyle="none", marker=marker,
                         markersize=4, color=color, markerfacecolor=color if filled else "none",
                         label=f"{label}, {source}")
            handles.setdefault(f"{label}, {source}", h)
        for base in dict.fromkeys(panel["baseline_d_ff"]):
            ax.axvline(base, linestyle="--", color="gray", linewidth=0.8)
        ax.set_title(", ".join(f"{name} = {v}" for name, v in zip(facets, value)))
        ax.set_xlabel("d_ff")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("SwiGLU MLP TFLOP/s")
    fig.legend(list(handles.values()), list(handles.keys()), loc="upper left",
               bbox_to_anchor=(1 - 2.5 / fig.get_figwidth(), 0.95), fontsize="small")
    return fig
