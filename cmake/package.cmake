# The Debian package: 'cpack -G DEB' in a build tree configured with
# CMAKE_INSTALL_PREFIX=/usr (scripts/build-deb.sh does both, for amd64 and arm64).
# Depends: comes from dpkg-shlibdeps, so it names the libraries of the Debian release the
# package was built on (Debian 13: libarchive13t64, libyaml-cpp0.8, ...).
set(CPACK_PACKAGE_NAME rtprov)
set(CPACK_PACKAGE_VENDOR rtprov)
set(CPACK_PACKAGE_CONTACT "rtprov developers <rtprov@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "makes Linux audio machines real-time ready and proves it")
set(CPACK_PACKAGE_DESCRIPTION
    "Reserves cores, pins the audio services there, keeps interrupts and housekeeping off
them and gives their threads real-time limits, from a board profile; offline on an image
root, at first boot or live; then self-tests and audits the running system.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The libraries rtprov loads when a command needs them (cmake/rtprov.cmake) are not in
# the binary's NEEDED list, so dpkg-shlibdeps does not see them; CPack appends what it
# finds to these.
list(JOIN RTPROV_LOADED_PACKAGES ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
# Built with -O2 -g like the tests' builds; the package carries the stripped binary.
set(CPACK_STRIP_FILES ON)
# cyclictest, for comparing rtprov's self-test with the usual tool (bench/).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS rt-tests)
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
endif()
include(CPack)
