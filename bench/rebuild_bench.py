#!/usr/bin/python3
"""What an edit of a widely included header costs to rebuild, from a build tree.

Usage: bench/rebuild_bench.py [BUILD_DIR] [--full HEADER]...

For each header below: how many of the build's objects depend on it (the
compiler's dependency files, *.o.d), which is what an edit of it recompiles
(for the system's headers, which objects parse them; BUILD/ is the build
tree, where crest.pb.h is generated from the protocol).
--full HEADER (repeatable) touches HEADER and times the real rebuild:
cmake --build on every core with ccache off, as after an edit that changes
the header's text. Minutes for a widely included header.
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


def full_rebuild(build, header):
    os.utime(os.path.join(ROOT, header))
    env = dict(os.environ, CCACHE_DISABLE="1")
    start = time.monotonic()
    done = subprocess.run(["cmake", "--build", build, f"-j{os.cpu_count()}"], env=env,
                          capture_output=True, text=True)
    wall = time.monotonic() - start
    objects = done.stdout.count("Building CXX")
    if done.returncode != 0:
        sys.exit(f"rebuild_bench: the rebuild after touching {header} failed "
                 f"(exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    print(f"  full rebuild after touching {header}: {objects} objects, {wall:.0f} s wall "
          f"({os.cpu_count()} cores; target <= {TARGET_S} s)")


def build_kind(build):
    """How the tree compiles its sources: CMakeCache.txt's CREST_UNITY."""
    try:
        with open(os.path.join(build, "CMakeCache.txt"), errors="replace") as fh:
            unity = any(line.strip() == "CREST_UNITY:BOOL=ON" for line in fh)
    except OSError:
        return "no CMakeCache.txt: how it compiles is unknown"
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
    parser.add_argument("--full", action="append", default=[],
                        help="also time the real rebuild after touching this header")
    a = parser.parse_args()
    build = os.path.abspath(a.build)
    for header in a.full:
        if not os.path.isfile(os.path.join(ROOT, header)):
            sys.exit(f"rebuild_bench: --full {header}: no such file under {ROOT} (give a path "
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
    for header in a.full:
        full_rebuild(build, header)


if __name__ == "__main__":
    main()
