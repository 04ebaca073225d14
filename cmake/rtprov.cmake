# SPDX-License-Identifier: Apache-2.0
# Dependencies (Debian packages) and the warning set shared by every target.
# All eight are required from the start so that a build environment is proven complete
# on Debian 12 and 13. yaml-cpp is linked; libmount (boot partition detection), libblkid
# (disk images), libarchive (the backup), libsystemd (D-Bus, the journal) and alsa-lib (the
# self-test's audio) are loaded by the code that uses them when it first runs
# (core::SharedLibrary), so a run maps only what its command needs: their headers are used,
# their libraries are not linked.
find_package(PkgConfig REQUIRED)
pkg_check_modules(YAMLCPP REQUIRED IMPORTED_TARGET yaml-cpp)
pkg_check_modules(LIBMOUNT REQUIRED IMPORTED_TARGET mount)
# libblkid: the partition table and file systems of a disk image (--image); util-linux's,
# as libmount (whose -dev package depends on it), so no new source of code
pkg_check_modules(LIBBLKID REQUIRED IMPORTED_TARGET blkid)
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)
pkg_check_modules(LIBSYSTEMD REQUIRED IMPORTED_TARGET libsystemd)
# alsa-lib: the self-test's underrun test plays through it, as the players do
pkg_check_modules(ALSA REQUIRED IMPORTED_TARGET alsa)
find_package(CLI11 2.1 REQUIRED)

# The Debian package holding a loaded library's file (for the error that says what to
# install, and for the package's Depends:, which dpkg-shlibdeps cannot see): asked of
# dpkg by the file's name under the target's multiarch folder, with the lowest version
# that has every function rtprov loads from it (the package's symbols file, as
# dpkg-shlibdeps reads it; the functions are the X(name) lists in SOURCE). On a system
# with dpkg an unknown owner stops the build (the package would lack a dependency);
# elsewhere it is empty. The fourth field says which of the package's fields names it:
# Depends (rtprov's commands need it) or Recommends (only an optional part does, which
# says what to install when it is missing); cmake/package.cmake gives each one's reason.
find_program(RTPROV_DPKG_QUERY dpkg-query)
set(RTPROV_LOADED_PACKAGES "")
set(RTPROV_RECOMMENDED_PACKAGES "")
foreach(spec "LIBMOUNT:libmount.so.1:provisioner/target/mounts.cpp:Depends"
             "LIBBLKID:libblkid.so.1:provisioner/target/disk_image.cpp:Depends"
             "LIBARCHIVE:libarchive.so.13:provisioner/target/backup_archive.cpp:Depends"
             "LIBSYSTEMD:libsystemd.so.0:provisioner/systemd/libsystemd.hpp:Depends"
             "LIBASOUND:libasound.so.2:provisioner/selftest/libasound.hpp:Recommends")
    string(REPLACE ":" ";" spec "${spec}")
    list(GET spec 0 var)
    list(GET spec 1 soname)
    list(GET spec 2 source)
    list(GET spec 3 field)
    execute_process(COMMAND ${RTPROV_DPKG_QUERY} -S "*/${CMAKE_LIBRARY_ARCHITECTURE}/${soname}"
                    OUTPUT_VARIABLE owner RESULT_VARIABLE failed ERROR_QUIET)
    set(package "")
    set(depends "")
    if(NOT failed)
        string(REGEX MATCHALL "(^|\n)[^:, \n]+(:[a-z0-9]+)?" owners "${owner}")
        list(TRANSFORM owners STRIP)
        list(REMOVE_DUPLICATES owners)
        list(LENGTH owners count)
        if(count GREATER 1)
            message(FATAL_ERROR "more than one package has */${CMAKE_LIBRARY_ARCHITECTURE}/${soname}: "
                                "${owners}; remove all but one")
        endif()
        string(REGEX REPLACE ":.*" "" package "${owners}")
        set(depends "${package}")
        set(symbols "/var/lib/dpkg/info/${owners}.symbols")
        if(package AND EXISTS "${symbols}")
            # The whole text, not its lines: an X-macro's lines end in '\', which would
            # escape the ';' between list items and make the list one item (its first
            # function alone was checked).
            file(READ "${PROJECT_SOURCE_DIR}/${source}" text)
            string(REGEX MATCHALL "X\\([a-z_0-9]+\\)" uses "${text}")
            set(newest "")
            set(newest_key "0")
            foreach(line IN LISTS uses)
                string(REGEX MATCH "X\\(([a-z_0-9]+)\\)" _ "${line}")
                file(STRINGS "${symbols}" found REGEX "^ ${CMAKE_MATCH_1}@[^ ]+ ")
                if(NOT found)
                    message(FATAL_ERROR "${symbols} has no ${CMAKE_MATCH_1}, which ${source} loads")
                endif()
                # A function with more than one symbol version (alsa-lib's
                # snd_pcm_hw_params_set_rate_near@ALSA_0.9 and @ALSA_0.9.0rc4) has a line
                # each: every one counts.
                foreach(entry IN LISTS found)
                    string(REGEX REPLACE "^ [^ ]+ ([^ ]+).*" "\\1" version "${entry}")
                    string(REGEX REPLACE "^[0-9]+:" "" key "${version}")
                    string(REGEX REPLACE "[^0-9.].*" "" key "${key}")
                    if(key VERSION_GREATER newest_key)
                        set(newest "${version}")
                        set(newest_key "${key}")
                    endif()
                endforeach()
            endforeach()
            if(newest)
                set(depends "${package} (>= ${newest})")
            endif()
        endif()
        if(package AND field STREQUAL "Recommends")
            list(APPEND RTPROV_RECOMMENDED_PACKAGES "${depends}")
        elseif(package)
            list(APPEND RTPROV_LOADED_PACKAGES "${depends}")
        endif()
    endif()
    if(RTPROV_DPKG_QUERY AND package STREQUAL "")
        message(FATAL_ERROR "dpkg knows no package with */${CMAKE_LIBRARY_ARCHITECTURE}/${soname}; "
                            "install the -dev package of that library for this architecture")
    endif()
    set(RTPROV_PACKAGE_${var} "${package}")
    message(STATUS "${soname} (loaded when used, ${field}:): ${depends}")
endforeach()

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

# rtprov_gzip(SOURCE OUTPUT): OUTPUT (in this build folder) is SOURCE compressed with
# gzip -9n, as Debian policy 12.1 and 12.7 want manual pages and changelogs: the best
# compression, and -n leaves out the file's name and time, so that two builds make the
# same bytes (reproducible builds).
find_program(RTPROV_GZIP gzip REQUIRED)
function(rtprov_gzip source output)
    add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${output}
        COMMAND sh -c "\"$1\" -9n -c \"$2\" >\"$3\"" sh ${RTPROV_GZIP}
                ${CMAKE_CURRENT_SOURCE_DIR}/${source} ${CMAKE_CURRENT_BINARY_DIR}/${output}
        DEPENDS ${source} VERBATIM)
endfunction()
