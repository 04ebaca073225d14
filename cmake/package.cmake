# SPDX-License-Identifier: Apache-2.0
# The Debian package: 'cpack -G DEB' in a build tree configured with
# CMAKE_INSTALL_PREFIX=/usr (scripts/build-deb.sh does both, for amd64 and arm64).
# Depends: comes from dpkg-shlibdeps, so it names the libraries of the Debian release the
# package was built on (Debian 13: libarchive13t64, libyaml-cpp0.8, ...; Debian 12:
# libarchive13, libyaml-cpp0.7, ...).
set(CPACK_PACKAGE_NAME rtprov)
# Appended to the project's version in the package's Version: (scripts/build-deb.sh):
# '~deb12' for the Debian 12 build, which sorts before the Debian 13 package's plain
# version (deb-version(7): '~' sorts before anything, even the end), so a host upgraded
# from 12 to 13 gets Debian 13's package, and the two never carry the same version.
set(RTPROV_DEB_VERSION_SUFFIX "" CACHE STRING "appended to the Debian package's version")
set(CPACK_DEBIAN_PACKAGE_VERSION "${PROJECT_VERSION}${RTPROV_DEB_VERSION_SUFFIX}")
set(CPACK_PACKAGE_VENDOR rtprov)
# Maintainer: lintian wants a mail host it can take for real (bogus-mail-host: 'invalid'
# alone is not a domain); example.org is reserved for examples (RFC 2606), so this says
# plainly that the project has no mail address yet. packaging/changelog names the same.
set(CPACK_PACKAGE_CONTACT "rtprov developers <rtprov@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "makes Linux audio machines real-time ready and proves it")
# Lines of at most 80 characters with the space CPack puts in front of each (lintian's
# extended-description-line-too-long).
set(CPACK_PACKAGE_DESCRIPTION
    "rtprov applies a board profile to an image root, at first boot or live: it
reserves cores, pins the audio services there, keeps interrupts and
housekeeping off them and gives their threads real-time limits. Then it
self-tests and audits the running system.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The libraries rtprov loads when a command needs them (cmake/rtprov.cmake) are not in
# the binary's NEEDED list, so dpkg-shlibdeps does not see them; CPack appends what it
# finds to these.
list(JOIN RTPROV_LOADED_PACKAGES ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
# alsa-lib only for 'rtprov selftest --audio' (the underrun test plays through it, as the
# players do): optional, and every other command, the self-test's latency measurement
# among them, works without it, which then says to install it. Recommends:, which apt
# installs by default; a box without sound (an image builder's host) may leave it out.
list(JOIN RTPROV_RECOMMENDED_PACKAGES ", " CPACK_DEBIAN_PACKAGE_RECOMMENDS)
# The package carries the stripped binary (scripts/build-deb.sh builds it without -g).
set(CPACK_STRIP_FILES ON)
# cyclictest, for comparing rtprov's self-test with the usual tool (bench/).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS rt-tests)
# Maintainer scripts (packaging/maintscripts): only for the status timer and the
# textfiles it writes; an apply's files stay until 'rtprov rollback' (README).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/packaging/maintscripts/postinst"
    "${PROJECT_SOURCE_DIR}/packaging/maintscripts/prerm"
    "${PROJECT_SOURCE_DIR}/packaging/maintscripts/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
endif()
include(CPack)
