#!/bin/bash -e
# SPDX-License-Identifier: Apache-2.0
# On the build host: apply the profile to the image root offline (cmdline.txt, config.txt,
# systemd drop-ins; rollback data in the image's /var/lib/rtprov), then set up first boot.
# shellcheck source-path=SCRIPTDIR source=rtprov-stage.sh
. ./rtprov-stage.sh

"${RTPROV}" apply --root "${ROOTFS_DIR}" "${rtprov_args[@]}"

if [ "${rtprov_firstboot}" = 1 ]; then
	# First boot applies the same profile live (a no-op when nothing drifted), then
	# self-tests and audits the real board (rtprov's docs/firstboot.md).
	mkdir -p "${ROOTFS_DIR}/etc/rtprov"
	{
		echo "# written by pi-gen's stage-rtprov"
		echo "profile: ${RTPROV_PROFILE:-pi4}"
		echo "set:"
		q="'" # YAML single quotes; a quote inside is doubled
		for ((i = 1; i < ${#rtprov_args[@]}; i++)); do
			if [ "${rtprov_args[i]}" = --set ]; then
				v=${rtprov_args[i + 1]}
				echo "  - '${v//$q/$q$q}'"
			fi
		done
	} >"${ROOTFS_DIR}/etc/rtprov/firstboot.yaml"
	[ "${#rtprov_args[@]}" -gt 2 ] || sed -i 's/^set:$/set: []/' "${ROOTFS_DIR}/etc/rtprov/firstboot.yaml"
	systemctl --root="${ROOTFS_DIR}" enable rtprov-firstboot.service
	echo "stage-rtprov: first boot will self-test and audit (/etc/rtprov/firstboot.yaml)"
else
	rm -f "${ROOTFS_DIR}/etc/rtprov/firstboot.yaml"
	systemctl --root="${ROOTFS_DIR}" disable rtprov-firstboot.service
fi
