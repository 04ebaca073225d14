#!/bin/bash -e
# SPDX-License-Identifier: Apache-2.0
# Check rtprov's settings and files first, so that a wrong one stops the build before
# this stage does anything; then, as in every stock pi-gen stage, start from the
# previous stage's root (pi-gen's stage1..5/prerun.sh).
(
	cd 00-rtprov
	# shellcheck source-path=SCRIPTDIR source=00-rtprov/rtprov-stage.sh
	. ./rtprov-stage.sh
	rtprov_find_deb
)
if [ ! -d "${ROOTFS_DIR}" ]; then
	copy_previous
fi
