"""scripts/llama_build.cmake, included at llama.cpp's project() by scripts/install.sh (issue 49,
item 5): "common" off, libllama at -O1 and ggml at the Release build's -O3.

A stand-in llama.cpp (a project of that name with a `llama` target made in src/, as the real one
makes it, and a `ggml` target) is configured with the include and its Ninja file read; nothing
is compiled and no llama.cpp is fetched."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT

INCLUDE = ROOT / "scripts" / "llama_build.cmake"
TOP = """cmake_minimum_required(VERSION 3.21)
project("llama.cpp" CXX)
option(LLAMA_BUILD_COMMON "build common" ON)
file(WRITE "${CMAKE_BINARY_DIR}/common.txt" "${LLAMA_BUILD_COMMON}")
add_library(ggml STATIC ggml.cpp)
add_subdirectory(src)
"""
SRC = "add_library(llama STATIC llama.cpp)\n"

pytestmark = pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("ninja") and shutil.which("c++")),
                                reason="needs cmake, ninja and a C++ compiler")


def configure(tmp_path: Path, src: str = SRC) -> Path:
    source, build = tmp_path / "llama.cpp", tmp_path / "build"
    (source / "src").mkdir(parents=True)
    (source / "CMakeLists.txt").write_text(TOP)
    (source / "src" / "CMakeLists.txt").write_text(src)
    for name in ("ggml.cpp", "src/llama.cpp"):
        (source / name).write_text("int f() { return 0; }\n")
    done = subprocess.run(["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                           f"-DCMAKE_PROJECT_llama.cpp_INCLUDE={INCLUDE}"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return build


def flags(build: Path, target: str) -> list[str]:
    ninja = (build / "build.ninja").read_text()
    found = re.search(rf"^build \S*{target}\.dir/\S+\.o: .*\n(?:  .*\n)*?  FLAGS = (.*)$", ninja, re.MULTILINE)
    assert found, f"no object of {target} in build.ninja"
    return [f for f in found.group(1).split() if f.startswith("-O")]


def test_libllama_is_built_at_o1_and_ggml_at_o3(tmp_path: Path) -> None:
    build = configure(tmp_path)
    assert flags(build, "llama")[-1] == "-O1"  # GCC and Clang take the last -O
    assert flags(build, "ggml") == ["-O3"]
    assert (build / "common.txt").read_text() == "OFF"


def test_a_build_without_libllama_still_configures(tmp_path: Path) -> None:
    build = configure(tmp_path, src="add_library(other STATIC llama.cpp)\n")
    assert flags(build, "other") == ["-O3"]
