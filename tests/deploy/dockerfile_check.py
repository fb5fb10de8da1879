#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks deploy/kubernetes/Dockerfile against the tree and the built binary (no Docker
needed): the build stage installs the Debian package of every pkg-config module the
CMake files ask for, the runtime stage installs the package of every shared library the
binary links (DT_NEEDED, libc6 comes with the base image) and of every one it dlopen()s by
a *_LIBRARY_SONAME of src/, both stages are debian:12-slim, and the entrypoint is the file
the build stage installs.

Usage: dockerfile_check.py DOCKERFILE JOULESTAT_BINARY SOURCE_DIR
"""
import functools
import glob
import os
import re
import subprocess
import sys

BASE_IMAGE = "debian:12-slim"
IN_BASE_IMAGE = {"libc6"}  # essential in every Debian image
BUILD_TOOLS = {"cmake", "ninja-build", "pkg-config", "build-essential"}


def stages(text):
    """[(FROM line, [instructions with continuation lines joined])]"""
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.upper().startswith("FROM "):
            out.append((s, []))
        elif out:
            out[-1][1].append(s)
    return out


def apt_packages(instructions):
    pkgs = set()
    for ins in instructions:
        for m in re.finditer(r"apt-get install ([^&;]*)", ins):
            pkgs.update(t for t in m.group(1).split() if not t.startswith("-"))
    return pkgs


@functools.lru_cache(maxsize=None)
def owning_package(path):
    """The Debian package that ships path, trying the /usr-merged aliases dpkg may know.
    Kept per path: each dpkg -S reads every package's file list (half a second on a
    machine with 900 packages), and the self-test checks the same binary six times."""
    cands = [path, os.path.realpath(path)]
    for p in list(cands):
        cands.append(p[4:] if p.startswith("/usr/") else "/usr" + p)
    for p in cands:
        r = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True, check=False)
        if r.returncode == 0:
            return r.stdout.split(":")[0].strip()
    return None


def needed_libraries(binary):
    out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True,
                         check=True).stdout
    return re.findall(r"\(NEEDED\).*\[(.+)\]", out)


@functools.lru_cache(maxsize=None)
def library_cache():
    return subprocess.run(["ldconfig", "-p"], capture_output=True, text=True,
                          check=True).stdout


def library_path(soname):
    out = library_cache()
    m = re.search(rf"^\s*{re.escape(soname)} \(libc6,x86-64[^)]*\) => (\S+)$", out, re.M)
    return m.group(1) if m else None


def dlopened_libraries(source_dir):
    """The sonames src/ loads on demand, each named by a #define ..._LIBRARY_SONAME."""
    sonames = set()
    for f in glob.glob(os.path.join(source_dir, "src", "**", "*.h"), recursive=True):
        with open(f, encoding="utf-8") as fh:
            sonames.update(re.findall(r'#define \w+_LIBRARY_SONAME "([^"]+)"', fh.read()))
    return sonames


def pkgconfig_modules(source_dir):
    mods = set()
    files = glob.glob(os.path.join(source_dir, "**", "CMakeLists.txt"), recursive=True)
    files += glob.glob(os.path.join(source_dir, "tests", "*.cmake"))
    for f in files:
        if os.path.relpath(f, source_dir).split(os.sep)[0].startswith("build"):
            continue  # build trees hold copies of nothing we need
        with open(f, encoding="utf-8") as fh:
            for m in re.finditer(r"pkg_check_modules\(\s*\w+\s+([^)]*)\)", fh.read()):
                words = [w for w in m.group(1).split()
                         if w not in ("REQUIRED", "QUIET", "IMPORTED_TARGET", "GLOBAL")]
                mods.update(re.sub(r"[<>=].*", "", w) for w in words)
    return mods


def check(dockerfile, binary, source_dir):
    errors = []
    with open(dockerfile, encoding="utf-8") as f:
        st = stages(f.read())
    if len(st) < 2:
        return [f"{dockerfile}: needs a build stage and a runtime stage"]
    for frm, _ in st:
        if frm.split()[1] != BASE_IMAGE:
            errors.append(f"{frm!r}: base image must be {BASE_IMAGE}")
    build, runtime = apt_packages(st[0][1]), apt_packages(st[-1][1])
    for tool in sorted(BUILD_TOOLS - build):
        errors.append(f"build stage does not install {tool}")
    for mod in sorted(pkgconfig_modules(source_dir)):
        pcdir = subprocess.run(["pkg-config", "--variable=pcfiledir", mod],
                               capture_output=True, text=True, check=False).stdout.strip()
        pkg = owning_package(os.path.join(pcdir, mod + ".pc")) if pcdir else None
        if pkg is None:
            errors.append(f"pkg-config module {mod}: no Debian package found here")
        elif pkg not in build:
            errors.append(f"build stage lacks {pkg} (pkg-config module {mod})")
    for soname in needed_libraries(binary):
        path = library_path(soname)
        pkg = owning_package(path) if path else None
        if pkg is None:
            errors.append(f"{soname}: no Debian package found here")
        elif pkg not in runtime and pkg not in IN_BASE_IMAGE:
            errors.append(f"runtime stage lacks {pkg} (the binary links {soname})")
    for soname in sorted(dlopened_libraries(source_dir)):
        path = library_path(soname)
        pkg = owning_package(path) if path else None
        if pkg is None:
            errors.append(f"{soname}: no Debian package found here")
        elif pkg not in runtime:
            errors.append(f"runtime stage lacks {pkg} (the binary loads {soname})")
    for pkg in sorted(runtime):
        if pkg.endswith("-dev"):
            errors.append(f"runtime stage installs development package {pkg}")
    rt = " ".join(st[-1][1])
    m = re.search(r'ENTRYPOINT \["([^"]+)"', rt)
    if not m or not re.search(rf"install .*/out{re.escape(m.group(1))}\b", " ".join(st[0][1])):
        errors.append("ENTRYPOINT is not the binary the build stage installs")
    if "COPY --from=build" not in rt:
        errors.append("runtime stage does not copy from the build stage")
    if not any(ins.startswith("USER ") for ins in st[-1][1]):
        errors.append("runtime stage sets no USER")
    return errors


def main(argv):
    if len(argv) != 4:
        raise SystemExit(__doc__)
    errors = check(argv[1], argv[2], argv[3])
    for e in errors:
        print(f"dockerfile_check: {e}", file=sys.stderr)
    if errors:
        return 1
    print(f"dockerfile_check: {argv[1]}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
