"""Run inside Pyodide (by ``live_compile.mjs``): an archive's modules compiled to bytecode.

Pyodide's CPython compiles every ``.py`` it imports and keeps nothing (it writes no
bytecode): the first check paid for compiling SymPy and the standard library inside
WebAssembly. Here, at build time, the same interpreter compiles each module once, and the
archive ships the ``.pyc`` in place of the ``.py``, as Pyodide's own packages do. The
bytecode is hash-based and the archive's dates fixed: the same archive in, the same out.
"""

import base64
import compileall
import csv
import hashlib
import io
import os
import py_compile
import shutil
import zipfile

DATE = (1980, 1, 1, 0, 0, 0)
SKIP = {"tests", "benchmarks"}  # a wheel's own test suites: never imported by the checker


def _record(tmp: str, files: list[str]) -> None:
    """Rewrite a wheel's RECORD for the files it now holds."""
    record = next(f for f in files if f.endswith(".dist-info/RECORD"))
    rows = []
    for f in sorted(files):
        if f != record:
            with open(os.path.join(tmp, f), "rb") as fh:
                data = fh.read()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            rows.append([f, "sha256=" + digest.decode(), str(len(data))])
    rows.append([record, "", ""])
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    with open(os.path.join(tmp, record), "w") as out:
        out.write(text.getvalue())


def compile_zip(src: str, dest: str, ddir: str, wheel: bool) -> None:
    """Write to ``dest`` the archive ``src`` with each module as bytecode only (sourceless).

    ``ddir`` is where the archive's files are imported from (the names tracebacks show); a
    ``wheel`` also loses its test suites and gets its RECORD rewritten.
    """
    tmp = "/tmp/archive"
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(src) as z:
        z.extractall(tmp)
    if wheel:
        for root, dirs, _ in os.walk(tmp):
            for d in SKIP.intersection(dirs):
                shutil.rmtree(os.path.join(root, d))
                dirs.remove(d)
    ok = compileall.compile_dir(
        tmp,
        quiet=2,
        legacy=True,  # module.pyc beside module.py: importable once the .py is gone
        ddir=ddir,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        workers=1,
    )
    if not ok:
        raise SystemExit(f"{src}: a module did not compile")
    files = []
    for root, _, names in os.walk(tmp):
        for name in names:
            path = os.path.join(root, name)
            if name.endswith(".py"):
                os.remove(path)  # its .pyc stands in for it
            else:
                files.append(os.path.relpath(path, tmp))
    if wheel:
        _record(tmp, files)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        # a wheel's metadata last, as wheels have it; every entry dated alike
        for f in sorted(files, key=lambda f: (".dist-info/" in f, f)):
            info = zipfile.ZipInfo(f, DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with open(os.path.join(tmp, f), "rb") as fh:
                z.writestr(info, fh.read(), compresslevel=9)
    shutil.rmtree(tmp)
