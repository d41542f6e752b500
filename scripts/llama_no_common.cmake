# Included by CMake at llama.cpp's project() (CMAKE_PROJECT_llama.cpp_INCLUDE, scripts/install.sh).
# llama-cpp-python forces llama.cpp's "common" library on, but its Python package loads only
# libllama and ggml: common (argument parsing, chat templates, Jinja, an HTTP client — 57 of the
# build's 127 compiled files) would be built and shipped unused. A normal variable set here,
# after that cache entry and before llama.cpp's option(), turns it off (policy CMP0077).
set(LLAMA_BUILD_COMMON OFF)
