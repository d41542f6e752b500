# Included by CMake at llama.cpp's project() (CMAKE_PROJECT_llama.cpp_INCLUDE, scripts/install.sh).

# llama-cpp-python forces llama.cpp's "common" library on, but its Python package loads only
# libllama and ggml: common (argument parsing, chat templates, Jinja, an HTTP client — 57 of the
# build's 127 compiled files) would be built and shipped unused. A normal variable set here,
# after that cache entry and before llama.cpp's option(), turns it off (policy CMP0077).
set(LLAMA_BUILD_COMMON OFF)

# libllama at -O1, ggml at the Release build's -O3. libllama (model loading, graph building,
# sampling, the tokenizer) is 42 of the 74 files compiled and 73 % of the build's CPU time at
# -O3 (373 of 510 CPU-s, measured beside other builds), 259 CPU-s at -O1: the build 22 % less.
# The embedded model spends 1.3 % of its run in libllama, the same at -O1 as at -O3 (perf:
# ggml-cpu's kernels are 86 %), and gives the same answers. Its target is made later, in src/, so
# the option is added when llama.cpp's CMakeLists.txt ends (DEFER); it comes after the build
# type's flags, and the last -O counts.
function(rtcbot_libllama_o1)
  if(TARGET llama)
    target_compile_options(llama PRIVATE -O1)
  endif()
endfunction()
cmake_language(DEFER CALL rtcbot_libllama_o1)
