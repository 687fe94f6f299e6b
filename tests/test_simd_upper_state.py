"""The AVX-512 kernels leave the vector unit's upper state clean on return.

ptcore's Cython modules are compiled for baseline x86-64 (SSE) and call
kernels compiled for AVX2 / AVX-512 chosen at run time.  A kernel must
return with the upper halves of ymm/zmm0-15 clean (``vzeroupper``): on Intel
CPUs the first SSE instruction after a return with dirty upper state costs
~120 ns (measured on an AVX-512 Xeon), which made a softmax over 3072 rows of
64 floats 3.6x slower (one penalty per row).  GCC placed ``vzeroupper``
before the move of a result held in xmm16-31 into xmm0, and for ``avx512f``
alone (no ``avx512vl``) that move is a full 512-bit ``vmovaps zmm``, which
dirties the state again.  The kernels are compiled for ``avx512f,avx512vl``
now (128-bit EVEX moves exist); this test reads the machine code of every
extension module and fails if any function writes a ymm/zmm register
between a ``vzeroupper`` and its return.
"""
import glob
import os
import platform
import re
import shutil
import subprocess

import pytest

import ptcore

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64") or shutil.which("objdump") is None,
    reason="needs x86-64 and objdump")

_FUNC = re.compile(r"^[0-9a-f]+ <(.+)>:$")
_WIDE_DEST = re.compile(r"%[yz]mm\d+(\{[^}]*\})*\s*$")


def dirty_returns(disassembly):
    """Functions that write a ymm/zmm register after a ``vzeroupper`` on the
    straight-line path to a ``ret`` (AT&T syntax: the destination is last)."""
    found = set()
    func, after = None, False
    for line in disassembly.splitlines():
        m = _FUNC.match(line)
        if m:
            func, after = m.group(1), False
            continue
        parts = line.split("\t")
        if len(parts) < 2:
            continue
        ins = parts[-1].strip()
        if ins.startswith("vzeroupper"):
            after = True
        elif after:
            if ins.startswith(("ret", "jmp", "call")):
                after = False
            elif _WIDE_DEST.search(ins.split("#")[0].strip()):
                found.add(func)
                after = False
    return found


def test_the_scanner_finds_a_dirty_return():
    text = ("0000000000001000 <f>:\n"
            "    1000:\tvzeroupper\n"
            "    1003:\tvmovaps %zmm17,%zmm0\n"
            "    1009:\tret\n"
            "0000000000002000 <g>:\n"
            "    2000:\tvmovaps %zmm17,%zmm0\n"
            "    2006:\tvzeroupper\n"
            "    2009:\tvmovss %xmm1,%xmm0,%xmm0\n"
            "    200d:\tret\n")
    assert dirty_returns(text) == {"f"}


def test_no_kernel_returns_with_dirty_upper_state():
    root = os.path.dirname(ptcore.__file__)
    mods = glob.glob(os.path.join(root, "**", "*.so"), recursive=True)
    # an editable install keeps the modules in its build tree
    mods += [m.__file__ for m in _loaded_extension_modules() if m.__file__ not in mods]
    assert mods, "no extension modules found"
    bad = {}
    for so in mods:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", so], capture_output=True,
                             text=True, check=True).stdout
        hits = dirty_returns(out)
        if hits:
            bad[os.path.basename(so)] = sorted(hits)
    assert not bad, f"functions returning with dirty ymm/zmm upper state: {bad}"


def _loaded_extension_modules():
    import sys
    return [m for name, m in list(sys.modules.items())
            if name.startswith("ptcore.") and getattr(m, "__file__", None)
            and m.__file__.endswith(".so")]
