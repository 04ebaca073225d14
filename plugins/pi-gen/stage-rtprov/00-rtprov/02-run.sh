#!/bin/bash -e
# SPDX-License-Identifier: Apache-2.0
# On the build host: apply the profile to the image root offline (cmdline.txt, config.txt,
# systemd drop-ins; rollback data in the image's /var/lib/rtprov) and, with
# RTPROV_FIRSTBOOT=1, first boot (--firstboot: /etc/rtprov/firstboot.yaml naming the same
# profile and overrides, and rtprov-firstboot.service enabled), which rollback takes out
# with the rest (rtprov's docs/plugin-contract.md).
# shellcheck source-path=SCRIPTDIR source=rtprov-stage.sh
. ./rtprov-stage.sh

if [ "${rtprov_firstboot}" = 1 ]; then
	# First boot applies the same profile live (a no-op when nothing drifted), then
	# self-tests and audits the real board (rtprov's docs/firstboot.md).
	"${RTPROV}" apply --root "${ROOTFS_DIR}" "${rtprov_args[@]}" --firstboot
	echo "stage-rtprov: first boot will self-test and audit (/etc/rtprov/firstboot.yaml)"
else
	# Without --firstboot, rtprov retires the first boot an earlier run of the stage set up;
	# the unit stays disabled should anything else have enabled it.
	"${RTPROV}" apply --root "${ROOTFS_DIR}" "${rtprov_args[@]}"
	systemctl --root="${ROOTFS_DIR}" disable rtprov-firstboot.service
fi
