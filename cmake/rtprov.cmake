# Dependencies (Debian packages) and the warning set shared by every target.
# All six are required from the start so that a build environment is proven complete
# on Debian 12 and 13; each is linked only by the folder that uses it (libmount: boot
# partition detection; libsystemd: online systemd operations, first boot).
find_package(PkgConfig REQUIRED)
pkg_check_modules(YAMLCPP REQUIRED IMPORTED_TARGET yaml-cpp)
pkg_check_modules(LIBMOUNT REQUIRED IMPORTED_TARGET mount)
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)
pkg_check_modules(LIBSYSTEMD REQUIRED IMPORTED_TARGET libsystemd)
find_package(CLI11 2.1 REQUIRED)

add_library(rtprov_warnings INTERFACE)
target_compile_options(rtprov_warnings INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor
    -Woverloaded-virtual -Wnull-dereference
    $<$<BOOL:${RTPROV_WERROR}>:-Werror>)

if(RTPROV_SANITIZE)
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                        -fno-sanitize-recover=all)
    add_link_options(-fsanitize=address,undefined)
endif()

# Fuzzing: every target gets libFuzzer's coverage instrumentation and ASan + UBSan, so
# coverage reaches rtprov_lib; only the fuzz targets link libFuzzer itself
# (-fsanitize=fuzzer, tests/fuzz/CMakeLists.txt).
if(RTPROV_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
        message(FATAL_ERROR "RTPROV_FUZZ needs clang (libFuzzer): "
                            "configure with -DCMAKE_CXX_COMPILER=clang++")
    endif()
    add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                        -fno-sanitize-recover=all)
    add_link_options(-fsanitize=address,undefined)
endif()
