"""The prebuilt llama.cpp runtime (scripts/llama_prebuilt.py): llama-cpp-py-sync's libraries under
llama-cpp-python's bindings. Its struct layouts are the ones the bindings declare, and its
glibc adaptation turns a library this glibc refuses into one it loads. Skipped where the install
compiled llama.cpp instead (no llama-cpp-py-sync)."""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from llama_prebuilt import glibc_compat  # noqa: E402

SYNC = importlib.util.find_spec("llama_cpp_py_sync")
needs_prebuilt = pytest.mark.skipif(SYNC is None, reason="llama.cpp was compiled here (no llama-cpp-py-sync)")
# llama-cpp-python's own binding of the training API's llama_opt_params lags the header it vendors
# (no optimizer_type), whichever way llama.cpp was built; the project does not train.
LAGGING = {"llama_opt_params"}


def _sync_dir() -> Path:
    assert SYNC is not None and SYNC.submodule_search_locations
    return Path(next(iter(SYNC.submodule_search_locations)))


def _glibc() -> tuple[int, int]:
    major, minor = (os.confstr("CS_GNU_LIBC_VERSION") or "glibc 0.0").split()[-1].split(".")[:2]
    return int(major), int(minor)


@needs_prebuilt
def test_the_libraries_have_the_struct_layouts_the_bindings_declare():
    """Every struct llama-cpp-python passes to llama.cpp by value or pointer has the size and field
    offsets of the prebuilt release's header (llama-cpp-py-sync's cffi declarations of it)."""
    from cffi import FFI

    import llama_cpp.llama_cpp as bindings

    text = (_sync_dir() / "_cffi_bindings.py").read_text()
    ffi = FFI()
    ffi.cdef(text.split('_LLAMA_H_CDEF = """', 1)[1].split('"""', 1)[0])
    compared = []
    for name, cls in vars(bindings).items():
        if not (isinstance(cls, type) and issubclass(cls, ctypes.Structure) and "_fields_" in vars(cls)):
            continue
        try:
            header = ffi.typeof(f"struct {name}")
        except ffi.error:
            continue  # a struct the release's public header does not declare (none today)
        ours = {f[0]: getattr(cls, f[0]).offset for f in cls._fields_}
        theirs = {f: ffi.offsetof(header, f) for f, _ in header.fields}
        shared = ours.keys() & theirs.keys()  # a union is one field in ctypes, its members in cffi
        if name in LAGGING:
            continue
        assert ffi.sizeof(header) == ctypes.sizeof(cls), name
        assert {f: ours[f] for f in shared} == {f: theirs[f] for f in shared}, name
        assert len(shared) >= len(ours) - 1, (name, ours.keys() - theirs.keys())
        compared.append(name)
    assert {"llama_model_params", "llama_context_params", "llama_batch", "llama_token_data",
            "llama_sampler_chain_params", "llama_chat_message"} <= set(compared), compared


@needs_prebuilt
@pytest.mark.skipif(_glibc() >= (2, 38), reason="this glibc loads the release's libraries as they are")
def test_glibc_compat_makes_the_release_library_load_here(tmp_path):
    """The release's libggml-base as shipped is refused by this glibc (< 2.38); adapted, it loads and
    its C23 references point at the classic functions."""
    lib = tmp_path / "libggml-base.so.0"
    shutil.copyfile(_sync_dir() / "libggml-base.so.0", lib)
    probe = f"import ctypes; ctypes.CDLL({str(lib)!r})"
    refused = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert refused.returncode != 0 and "GLIBC_2.38" in refused.stderr
    assert glibc_compat(lib) == ["__isoc23_strtol"]
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert loaded.returncode == 0, loaded.stderr
    assert b"__isoc23_" in lib.read_bytes()  # the string stays (strtol is its tail) ...
    assert glibc_compat(lib) == []  # ... but nothing refers to GLIBC_2.38 any more: a second pass changes nothing


def test_glibc_compat_refuses_what_it_cannot_map(tmp_path):
    """A file that is not a 64-bit ELF is refused with its name, not patched."""
    bad = tmp_path / "not-elf.so"
    bad.write_bytes(b"#!/bin/sh\n")
    with pytest.raises(ValueError, match="not-elf.so: not a 64-bit little-endian ELF file"):
        glibc_compat(bad)
