#!/usr/bin/python3
"""What an edit of a widely included header costs to rebuild, from a build tree.

Usage: bench/rebuild_bench.py [BUILD_DIR] [--full HEADER]... [--touch HEADER]...

For each header below: how many of the build's objects depend on it (the
compiler's dependency files, *.o.d), which is what an edit of it recompiles
(for the system's headers, which objects parse them; BUILD/ is the build
tree, where crest.pb.h is generated from the protocol).
--full HEADER (repeatable) touches HEADER and times the real rebuild:
cmake --build on every core with ccache off, as after an edit that changes
the header's text. Minutes for a widely included header.
--touch HEADER (repeatable) touches HEADER and times the rebuild with the
tree's ccache left on, as after a touch, a branch switched and back, or an
edit undone: the header's text is the one compiled before, so each object
it recompiles can come from the cache; it prints how many did. Run it on a
tree whose objects are in the cache (built once with ccache on).
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
HEADERS = [
    "tuner/include/crest/tuner/gemm.h",
    "tuner/include/crest/tuner/timing.h",
    "tuner/include/crest/tuner/timing_ops.h",
    "store/include/crest/store/store.h",
    "store/include/crest/store/schema_version.h",
    "common/include/crest/common/cmdline.h",
    "/usr/include/CLI/CLI.hpp",
    "/usr/include/nlohmann/json.hpp",
    # generated from proto/crest/v1/crest.proto: what an edit of the protocol recompiles
    "BUILD/proto/generated/crest/v1/crest.pb.h",
]
TARGET_S = 120  # the target: a rebuild <= 2 minutes on 2 cores


def dependency_files(build):
    """Each object's dependencies as a set of absolute paths. A compiler
    writes them relative to its working directory (the target's directory,
    above CMakeFiles/) when ccache's base_dir rewrites its paths."""
    out = {}
    for root, _, files in os.walk(build):
        for f in files:
            if f.endswith(".o.d"):
                path = os.path.join(root, f)
                with open(path, errors="replace") as fh:
                    text = fh.read()
                cwd = root.split(os.sep + "CMakeFiles" + os.sep)[0]
                _, _, deps = text.partition(":")
                out[path[: -len(".d")]] = {
                    os.path.normpath(os.path.join(cwd, dep))
                    for dep in deps.replace("\\\n", " ").split()}
    return out


def touch_and_build(build, header, env):
    """Touches HEADER, rebuilds the tree on every core under ENV: (the
    objects compiled, wall seconds). Exits when the build fails."""
    os.utime(os.path.join(ROOT, header))
    start = time.monotonic()
    done = subprocess.run(["cmake", "--build", build, f"-j{os.cpu_count()}"], env=env,
                          capture_output=True, text=True)
    wall = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"rebuild_bench: the rebuild after touching {header} failed "
                 f"(exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout.count("Building CXX"), wall


def full_rebuild(build, header):
    objects, wall = touch_and_build(build, header, dict(os.environ, CCACHE_DISABLE="1"))
    print(f"  full rebuild after touching {header}: {objects} objects, {wall:.0f} s wall "
          f"({os.cpu_count()} cores; target <= {TARGET_S} s)")


def ccache_counts():
    """ccache's counters, {name: count}, from ccache --print-stats; {} when
    ccache is not there or does not answer."""
    try:
        done = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True)
    except OSError:
        return {}
    counts = {}
    for line in done.stdout.splitlines():
        name, _, value = line.partition("\t")
        if value.strip().isdigit():
            counts[name] = int(value)
    return counts


def cache_entries(build):
    """The tree's CMakeCache.txt as {name: value} (types dropped), or None
    when it has none."""
    entries = {}
    try:
        with open(os.path.join(build, "CMakeCache.txt"), errors="replace") as fh:
            for line in fh:
                name, _, value = line.strip().partition("=")
                entries[name.partition(":")[0]] = value
    except OSError:
        return None
    return entries


def tree_launcher(build):
    """The compiler launcher the tree compiles with: CMakeCache.txt's
    CMAKE_CXX_COMPILER_LAUNCHER where it was given (empty turns ccache off),
    else the ccache CMakeLists.txt found (CREST_CCACHE); "" for none."""
    entries = cache_entries(build) or {}
    if "CMAKE_CXX_COMPILER_LAUNCHER" in entries:
        return entries["CMAKE_CXX_COMPILER_LAUNCHER"]
    found = entries.get("CREST_CCACHE", "")
    return "" if found.endswith("-NOTFOUND") else found


def touch_rebuild(build, header):
    launcher = tree_launcher(build)
    if "ccache" not in os.path.basename(launcher):
        print(f"  rebuild after touching {header} with ccache: not timed: {build} compiles "
              "without ccache (CMakeCache.txt: no CREST_CCACHE, or a launcher that is not it)")
        return
    env = {k: v for k, v in os.environ.items() if k != "CCACHE_DISABLE"}
    before = ccache_counts()
    objects, wall = touch_and_build(build, header, env)
    after = ccache_counts()
    hits = sum(after.get(k, 0) - before.get(k, 0)
               for k in ("direct_cache_hit", "preprocessed_cache_hit"))
    print(f"  rebuild after touching {header} with ccache: {objects} objects, {hits} from "
          f"the cache, {wall:.0f} s wall ({os.cpu_count()} cores; target <= {TARGET_S} s)")


def build_kind(build):
    """How the tree compiles its sources: CMakeCache.txt's CREST_UNITY."""
    entries = cache_entries(build)
    if entries is None:
        return "no CMakeCache.txt: how it compiles is unknown"
    unity = entries.get("CREST_UNITY") == "ON"
    kind = ("a unity build: each object is a batch of up to 8 sources" if unity else
            "each source its own object: CREST_UNITY=OFF")
    return f"{kind}; {debug_info(build)}"


def debug_info(build):
    """The debug information the tree's C++ compiles make, from
    compile_commands.json: -g1 (line tables, the default) or -g (full).
    (The CUDA kernel's compile keeps nvcc's own flags.)"""
    try:
        with open(os.path.join(build, "compile_commands.json"), errors="replace") as fh:
            commands = json.load(fh)
        flags = next(set(c["command"].split()) for c in commands
                     if c["file"].endswith((".cc", ".cxx", ".cpp")))
    except (OSError, ValueError, KeyError, StopIteration):
        return "debug information unknown (no C++ compile in compile_commands.json)"
    for flag, words in (("-g1", "line tables"), ("-g", "full")):
        if flag in flags:
            return f"debug information {flag} ({words})"
    return "no debug information"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--full", action="append", default=[], metavar="HEADER",
                        help="also time the rebuild after touching HEADER with ccache off, "
                             "as after an edit of its text")
    parser.add_argument("--touch", action="append", default=[], metavar="HEADER",
                        help="also time the rebuild after touching HEADER with the tree's "
                             "ccache on, its text unchanged")
    a = parser.parse_args()
    build = os.path.abspath(a.build)
    for option, header in [("--full", h) for h in a.full] + [("--touch", h) for h in a.touch]:
        if not os.path.isfile(os.path.join(ROOT, header)):
            sys.exit(f"rebuild_bench: {option} {header}: no such file under {ROOT} (give a path "
                     "relative to the repository, as tuner/include/crest/tuner/timing_ops.h)")
    deps = dependency_files(build)
    if not deps:
        sys.exit(f"rebuild_bench: no dependency files (*.o.d) under {build}")
    print(f"  {len(deps)} objects in {build} ({build_kind(build)})")
    seen = 0
    for header in HEADERS:
        if header.startswith("BUILD/"):
            name = os.path.join(build, header[len("BUILD/"):])
        else:
            name = header if header.startswith("/") else os.path.join(ROOT, header)
        dependents = sum(1 for paths in deps.values() if name in paths)
        print(f"  {header}: an edit recompiles {dependents} objects")
        seen += 0 if header.startswith(("/", "BUILD/")) else dependents
    if seen == 0:
        sys.exit(f"rebuild_bench: no object of {build} depends on the tree's headers: "
                 f"is it a build of another checkout than {ROOT}?")
    for header in a.touch:
        touch_rebuild(build, header)
    for header in a.full:
        full_rebuild(build, header)


if __name__ == "__main__":
    main()
